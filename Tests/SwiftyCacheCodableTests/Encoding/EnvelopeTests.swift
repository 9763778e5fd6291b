import Foundation
import Testing

@testable import SwiftyCacheCodable

/// Slot 0's bytes, against the layout every release reads (`Envelope`'s doc comment): written
/// byte for byte as earlier releases wrote them, so that they read what this one writes.
@Suite struct EnvelopeTests {
    let created = Date(timeIntervalSince1970: 1_700_000_000.5)
    let key = Data("k1".utf8)

    @Test func aVersionOneEnvelopeWithoutExpiryIsLaidOutAsDocumented() throws {
        var bytes: [UInt8] = [0xEE]  // a payload before it stays untouched
        Envelope(codec: .json, created: created, expires: nil, keyBytes: key).append(to: &bytes)
        let expected: [UInt8] =
            [0xEE]
            + Array("SCOB".utf8) + [1, 1, 0, 0]
            + [0, 0, 32, 64, 252, 84, 217, 65]  // 1,700,000,000.5
            + [0, 0, 0, 0, 0, 0, 248, 127]  // NaN: never expires
            + [2, 0, 0, 0] + Array("k1".utf8)
        #expect(bytes == expected)
        let decoded = try Envelope(decoding: Data(bytes.dropFirst()))
        #expect(decoded == Envelope(codec: .json, created: created, expires: nil, keyBytes: key))
    }

    @Test func aVersionTwoEnvelopeCarriesItsSchemaVersionBeforeTheKey() throws {
        var bytes: [UInt8] = []
        let expires = Date(timeIntervalSince1970: 1_700_003_600)
        let envelope = Envelope(
            codec: .binaryPropertyList, created: created, expires: expires, keyBytes: key, schemaVersion: -2)
        envelope.append(to: &bytes)
        let expected: [UInt8] =
            Array("SCOB".utf8) + [2, 2, 0, 0]
            + [0, 0, 32, 64, 252, 84, 217, 65]
            + [0, 0, 0, 196, 255, 84, 217, 65]  // 1,700,003,600
            + [2, 0, 0, 0] + [0xFE, 0xFF, 0xFF, 0xFF] + Array("k1".utf8)
        #expect(bytes == expected)
        #expect(try Envelope(decoding: Data(bytes)) == envelope)
    }
}
