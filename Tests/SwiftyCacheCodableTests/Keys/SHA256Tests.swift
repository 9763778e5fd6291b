import SwiftyCacheCodable
import Testing

@Suite struct SHA256Tests {
    /// FIPS 180-2 / NIST CAVP example vectors.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func nistVectors(message: String, digest: String) {
        #expect(SHA256.hexDigest(Array(message.utf8)) == digest)
    }

    @Test func oneMillionTimesA() {
        #expect(
            SHA256.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func incrementalUpdatesMatchOneShot() {
        let message = Array((0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        for split in [0, 1, 55, 56, 63, 64, 65, 500, 1000] {
            var hasher = SHA256()
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hasher.finalize() == SHA256.hash(message), "split at \(split)")
        }
    }

    @Test func everyTailLengthAgreesAcrossTheOneShotAndStreamingPaths() {
        for length in 0...130 {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            var streamed = SHA256()
            for byte in message { streamed.update([byte]) }
            let lazy = message.lazy.map { $0 }  // not contiguous: takes the buffered path
            #expect(SHA256.hash(message) == streamed.finalize(), "length \(length)")
            #expect(SHA256.hexDigest(message) == SHA256.hexDigest(lazy), "length \(length)")
        }
    }
}
