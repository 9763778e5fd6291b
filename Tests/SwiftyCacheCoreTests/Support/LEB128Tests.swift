import Testing

@testable import SwiftyCacheCore

/// The varints of the saved index and of journal blocks: what `SavedIndex.appendVarint`
/// writes reads back, and a varint cut short or longer than ten bytes reads as nothing.
@Suite struct LEB128Tests {
    func read(_ bytes: [UInt8]) -> (value: UInt64?, position: Int) {
        bytes.withUnsafeBytes { buffer in
            var position = 0
            let value = LEB128.read(buffer, at: &position)
            return (value, position)
        }
    }

    @Test(arguments: [0, 1, 127, 128, 300, 1 << 32, UInt64.max - 1, UInt64.max])
    func whatIsWrittenReadsBack(value: UInt64) {
        var bytes: [UInt8] = []
        LEB128.append(value, to: &bytes)
        #expect(bytes.count == max(1, (64 - value.leadingZeroBitCount + 6) / 7))
        let (read, position) = read(bytes + [0xAA])
        #expect(read == value)
        #expect(position == bytes.count)
    }

    @Test func aVarintCutShortOrTooLongIsNothing() {
        #expect(read([]).value == nil)
        #expect(read([0x80]).value == nil)
        #expect(read([0xFF, 0xFF]).value == nil)
        #expect(read([UInt8](repeating: 0xFF, count: 10) + [0x01]).value == nil)
        #expect(read([0x05]).value == 5)
    }
}
