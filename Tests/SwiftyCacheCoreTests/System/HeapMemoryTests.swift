import Foundation
import Testing

@testable import SwiftyCacheCore

/// An array of the index reserved for a bulk load has its capacity faulted in a window at a time,
/// just ahead of what is appended: the pages about to be written are resident before they are
/// written, and the rest of a capacity reserved from a generous estimate is not.
@Suite struct HeapMemoryTests {
    /// Whether each page of `bytes` bytes from `offset` in `array`'s storage is resident
    /// (`mincore`), `nil` where it cannot be asked.
    func residency(of array: inout [UInt64], offset: Int, bytes: Int) -> [Bool]? {
        #if os(Linux)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        return array.withUnsafeMutableBufferPointer { buffer -> [Bool]? in
            guard let base = buffer.baseAddress else { return nil }
            let start = (Int(bitPattern: UnsafeMutableRawPointer(base)) + offset + page - 1) & ~(page - 1)
            let count = bytes / page - 1
            var vector = [UInt8](repeating: 0, count: count)
            guard let pointer = UnsafeMutableRawPointer(bitPattern: start),
                mincore(pointer, count * page, &vector) == 0
            else { return nil }
            return vector.map { $0 & 1 == 1 }
        }
        #else
        return nil
        #endif
    }

    @Test func theSpareCapacityIsFaultedInAWindowAheadOfTheElements() throws {
        var array: [UInt64] = []
        var ahead = FaultAhead()
        // 64 MiB: past glibc's largest mmap threshold, so fresh pages, none resident yet.
        ahead.reserve(&array, capacity: 8 << 20)
        array.append(1)
        ahead.advance(&array)
        #expect(array == [1])
        #if os(Linux)
        let near = try #require(residency(of: &array, offset: 0, bytes: 1 << 20))
        let far = try #require(residency(of: &array, offset: 32 << 20, bytes: 16 << 20))
        #expect(near.allSatisfy { $0 }, "the window ahead is not resident")
        #expect(far.allSatisfy { !$0 }, "the whole reservation was faulted in")
        #endif
        // Appending on moves the window with the elements.
        for value in 0..<UInt64(5 << 20) { array.append(value) }  // written up to 40 MiB
        ahead.advance(&array)
        #if os(Linux)
        let reached = try #require(residency(of: &array, offset: 40 << 20, bytes: 1 << 20))
        #expect(reached.allSatisfy { $0 })
        #endif
        #expect(array.count == (5 << 20) + 1)
    }

    @Test func smallArraysAreLeftToFaultAsTheyAreWritten() {
        var small: [UInt64] = []
        var ahead = FaultAhead()
        ahead.reserve(&small, capacity: 1_024)
        small.append(3)
        ahead.advance(&small)
        #expect(small == [3])
        #expect(small.capacity >= 1_024)
    }
}
