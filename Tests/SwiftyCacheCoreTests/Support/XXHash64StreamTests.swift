import SwiftyCacheTestSupport
import Testing

@testable import SwiftyCacheCore

/// XXH64 over bytes that arrive in pieces equals XXH64 of their concatenation.
@Suite struct XXHash64StreamTests {
    @Test func theReferenceValueOfNoBytes() {
        #expect(XXHash64.Stream().finalize() == 0xEF46_DB37_51D8_E999)
        #expect(XXHash64.hash([]) == 0xEF46_DB37_51D8_E999)
    }

    @Test func anySplitGivesTheOneShotHash() {
        var random = SplitMix(state: 7)
        for _ in 0..<300 {
            let count = Int(random.next() % 300)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let seed = random.next() % 2 == 0 ? 0 : random.next()
            var stream = XXHash64.Stream(seed: seed)
            var start = 0
            while start < count {
                let end = min(count, start + Int(random.next() % 70))
                bytes[start..<end].withUnsafeBytes { stream.update($0) }
                start = end
            }
            let whole = bytes.withUnsafeBytes { XXHash64.hash($0, seed: seed) }
            #expect(stream.finalize() == whole, "\(count) bytes")
        }
    }
}
