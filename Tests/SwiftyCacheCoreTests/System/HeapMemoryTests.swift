import Foundation
import Testing

@testable import SwiftyCacheCore

/// An array about to be filled in bulk (the index at a reopen) has its pages faulted in with
/// one call: its contents stay, its capacity grows, and on Linux the pages are resident before
/// a byte of them is written.
@Suite struct HeapMemoryTests {
    /// The process's resident bytes (`/proc/self/statm`).
    func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func aPrefaultedReservationKeepsTheElementsAndIsResident() throws {
        var array: [UInt64] = [1, 2, 3]
        let before = residentBytes()
        // 64 MiB: past glibc's largest mmap threshold, so fresh pages, not a reused block.
        array.reserveCapacityPrefaulted(8 << 20)
        let after = residentBytes()
        #expect(array == [1, 2, 3])
        #expect(array.capacity >= 8 << 20)
        #if os(Linux)
        if let before, let after {
            #expect(after - before >= 60 << 20, "the reserved pages were not faulted in")
        }
        #endif
        // A smaller reservation is left to fault as it is written.
        var small: [UInt8] = []
        small.reserveCapacityPrefaulted(4_096)
        #expect(small.capacity >= 4_096 && small.isEmpty)
    }
}
