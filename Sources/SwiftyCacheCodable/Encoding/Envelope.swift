public import SwiftyCacheCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Slot 0 of every entry: what is needed to trust slot 1 before decoding it.
///
/// Layout, little-endian:
///
///     offset  size  field
///     0       4     magic "SCOB"
///     4       1     envelope version (1)
///     5       1     codec (0 raw, 1 JSON, 2 binary plist, 3 XML plist)
///     6       2     reserved, zero
///     8       8     created, seconds since 1970 (Double bits)
///     16      8     expires, seconds since 1970 (Double bits; NaN: never)
///     24      4     key length n
///     28      n     the original key's canonical bytes
@usableFromInline
struct Envelope: Equatable {
    static let magic = Array("SCOB".utf8)
    static let currentVersion: UInt8 = 1
    @usableFromInline static let headerSize = 28

    var codec: ObjectCacheFormat.Codec
    var created: Date
    var expires: Date?
    var keyBytes: Data

    func encoded() -> Data {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return Data(bytes)
    }

    /// Appends the envelope to `bytes`, where the payload follows it: one buffer for both.
    @usableFromInline
    func append(to bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + Self.headerSize + keyBytes.count)
        // Byte by byte and through buffer pointers: `append(contentsOf:)` of an array literal
        // or a `Data` takes the generic path, a tenth of an encode of a small value.
        for byte in Self.magic { bytes.append(byte) }
        bytes.append(Self.currentVersion)
        bytes.append(codec.rawValue)
        bytes.append(0)
        bytes.append(0)
        Self.append(created.timeIntervalSince1970.bitPattern, to: &bytes)
        Self.append((expires?.timeIntervalSince1970 ?? .nan).bitPattern, to: &bytes)
        Self.append(UInt32(truncatingIfNeeded: keyBytes.count), to: &bytes)
        keyBytes.withUnsafeBytes { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    enum DecodingFailure: Error {
        case notAnEnvelope
        case unsupportedVersion(UInt8)
        case unknownCodec(UInt8)
    }

    @usableFromInline
    init(codec: ObjectCacheFormat.Codec, created: Date, expires: Date?, keyBytes: Data) {
        self.codec = codec
        self.created = created
        self.expires = expires
        self.keyBytes = keyBytes
    }

    init(decoding data: Data) throws(DecodingFailure) {
        let (codec, created, expires) = try data.withUnsafeBytes { bytes in Self.fields(of: bytes) }.get()
        self.codec = codec
        self.created = Date(timeIntervalSince1970: created)
        self.expires = expires.isNaN ? nil : Date(timeIntervalSince1970: expires)
        self.keyBytes = data.dropFirst(Self.headerSize)
    }

    /// The codec, creation and expiry (NaN: never) of the envelope in `bytes`, checked: the
    /// magic, the version, the codec and the key's length, which must end the bytes.
    private static func fields(
        of bytes: UnsafeRawBufferPointer
    ) -> Result<(ObjectCacheFormat.Codec, Double, Double), DecodingFailure> {
        guard bytes.count >= Self.headerSize, bytes.prefix(4).elementsEqual(Self.magic) else {
            return .failure(.notAnEnvelope)
        }
        guard bytes[4] == Self.currentVersion else { return .failure(.unsupportedVersion(bytes[4])) }
        guard let codec = ObjectCacheFormat.Codec(rawValue: bytes[5]) else { return .failure(.unknownCodec(bytes[5])) }
        let keyLength = Int(Self.read(UInt32.self, bytes, at: 24))
        guard bytes.count == Self.headerSize + keyLength else { return .failure(.notAnEnvelope) }
        let created = Double(bitPattern: Self.read(UInt64.self, bytes, at: 8))
        let expires = Double(bitPattern: Self.read(UInt64.self, bytes, at: 16))
        return .success((codec, created, expires))
    }

    func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// What an entry's envelope says of its payload, for a read of `keyBytes` at `now`.
    @usableFromInline
    enum Check {
        /// The payload (slot 1) is the key's value, in `codec`, live until `expires`.
        case payload(codec: ObjectCacheFormat.Codec, expires: Date?)
        /// Another key's entry under the same hashed name.
        case collision
        /// Another format, or no envelope.
        case incompatible
        case expired
    }

    /// Checks the envelope in slot 0 of an entry read for `keyBytes`, where the read left it:
    /// its format must be `codec` (or raw bytes), its key `keyBytes`, and its expiry after
    /// `now`. Not generic, so that the typed read around it, specialized for the caller's
    /// types, stays small.
    @usableFromInline
    static func check(_ values: ReadValues, keyBytes: Data, now: Date, codec: ObjectCacheFormat.Codec) -> Check {
        guard values.count >= 2 else { return .incompatible }
        return values.withBytes(ofSlot: 0) { bytes -> Check in
            guard case .success(let (found, _, expiresBits)) = fields(of: bytes), found == codec || found == .raw
            else { return .incompatible }
            let storedKey = UnsafeRawBufferPointer(rebasing: bytes[Self.headerSize...])
            guard keyBytes.withUnsafeBytes({ $0.elementsEqual(storedKey) }) else { return .collision }
            let expires = expiresBits.isNaN ? nil : Date(timeIntervalSince1970: expiresBits)
            if let expires, expires <= now { return .expired }
            return .payload(codec: found, expires: expires)
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func read<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> T
    {
        var value: T = 0
        for i in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + i]) << (8 * i) }
        return value
    }
}
