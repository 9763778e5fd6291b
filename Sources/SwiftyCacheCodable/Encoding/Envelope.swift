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
///     4       1     envelope version (1 or 2)
///     5       1     codec (0 raw, 1 JSON, 2 binary plist, 3 XML plist)
///     6       2     reserved, zero
///     8       8     created, seconds since 1970 (Double bits)
///     16      8     expires, seconds since 1970 (Double bits; NaN: never)
///     24      4     key length n
///     version 1:
///     28      n     the original key's canonical bytes
///     version 2:
///     28      4     the value's schema version (Int32)
///     32      n     the original key's canonical bytes
///
/// A version 1 envelope records no schema version: its value has the version the directory
/// gives such entries (``SchemaRecord``). An entry is written in version 1 whenever that is
/// its schema version, so a cache that never changed its schema stays readable by the releases
/// before version 2, which read a version 2 envelope as another format (a miss).
@usableFromInline
struct Envelope: Equatable {
    static let magic = Array("SCOB".utf8)
    @usableFromInline static let headerSize = 28
    /// The bytes before the key in a version 2 envelope.
    static let versionedHeaderSize = 32

    var codec: ObjectCacheFormat.Codec
    var created: Date
    var expires: Date?
    var keyBytes: Data
    /// The value's schema version, recorded (version 2); `nil` for a version 1 envelope.
    var schemaVersion: Int?

    func encoded() -> Data {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return Data(bytes)
    }

    /// Appends the envelope to `bytes`, where the payload follows it: one buffer for both.
    @usableFromInline
    func append(to bytes: inout [UInt8]) {
        // The header is laid out in 32 bytes on the stack and appended whole, then the key:
        // two appends. (Appended field by field it cost a tenth of an encode of a small value.)
        var header: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let size = schemaVersion == nil ? Self.headerSize : Self.versionedHeaderSize
        withUnsafeMutableBytes(of: &header) { header in
            for (offset, byte) in Self.magic.enumerated() { header[offset] = byte }
            header[4] = schemaVersion == nil ? 1 : 2
            header[5] = codec.rawValue
            header.storeBytes(
                of: created.timeIntervalSince1970.bitPattern.littleEndian, toByteOffset: 8, as: UInt64.self)
            let expiresBits = (expires?.timeIntervalSince1970 ?? .nan).bitPattern
            header.storeBytes(of: expiresBits.littleEndian, toByteOffset: 16, as: UInt64.self)
            header.storeBytes(
                of: UInt32(truncatingIfNeeded: keyBytes.count).littleEndian, toByteOffset: 24, as: UInt32.self)
            if let schemaVersion {
                header.storeBytes(
                    of: Int32(truncatingIfNeeded: schemaVersion).littleEndian, toByteOffset: 28, as: Int32.self)
            }
            bytes.reserveCapacity(bytes.count + size + keyBytes.count)
            bytes.append(
                contentsOf: UnsafeRawBufferPointer(rebasing: header[..<size]).assumingMemoryBound(to: UInt8.self))
        }
        keyBytes.withUnsafeBytes { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    enum DecodingFailure: Error {
        case notAnEnvelope
        case unsupportedVersion(UInt8)
        case unknownCodec(UInt8)
    }

    @usableFromInline
    init(codec: ObjectCacheFormat.Codec, created: Date, expires: Date?, keyBytes: Data, schemaVersion: Int? = nil) {
        self.codec = codec
        self.created = created
        self.expires = expires
        self.keyBytes = keyBytes
        self.schemaVersion = schemaVersion
    }

    init(decoding data: Data) throws(DecodingFailure) {
        let fields = try data.withUnsafeBytes { bytes in Self.fields(of: bytes) }.get()
        self.codec = fields.codec
        self.created = Date(timeIntervalSince1970: fields.created)
        self.expires = fields.expires.isNaN ? nil : Date(timeIntervalSince1970: fields.expires)
        self.keyBytes = data.dropFirst(fields.keyOffset)
        self.schemaVersion = fields.schemaVersion
    }

    /// An envelope's fields as read: dates as seconds (expires NaN: never), and where the key
    /// begins.
    struct Fields {
        var codec: ObjectCacheFormat.Codec
        var created: Double
        var expires: Double
        var schemaVersion: Int?
        var keyOffset: Int
    }

    /// The fields of the envelope in `bytes`, checked: the magic, the version, the codec and
    /// the key's length, which must end the bytes.
    static func fields(of bytes: UnsafeRawBufferPointer) -> Result<Fields, DecodingFailure> {
        guard bytes.count >= Self.headerSize, bytes.prefix(4).elementsEqual(Self.magic) else {
            return .failure(.notAnEnvelope)
        }
        let keyOffset: Int
        switch bytes[4] {
        case 1: keyOffset = Self.headerSize
        case 2 where bytes.count >= Self.versionedHeaderSize: keyOffset = Self.versionedHeaderSize
        case 2: return .failure(.notAnEnvelope)
        default: return .failure(.unsupportedVersion(bytes[4]))
        }
        guard let codec = ObjectCacheFormat.Codec(rawValue: bytes[5]) else { return .failure(.unknownCodec(bytes[5])) }
        let keyLength = Int(Self.read(UInt32.self, bytes, at: 24))
        // `bytes.count - keyOffset` cannot go below zero: checked above. No addition that a
        // hostile length could overflow.
        guard bytes.count - keyOffset == keyLength else { return .failure(.notAnEnvelope) }
        return .success(
            Fields(
                codec: codec,
                created: Double(bitPattern: Self.read(UInt64.self, bytes, at: 8)),
                expires: Double(bitPattern: Self.read(UInt64.self, bytes, at: 16)),
                schemaVersion: keyOffset == Self.versionedHeaderSize
                    ? Int(Int32(bitPattern: Self.read(UInt32.self, bytes, at: 28))) : nil,
                keyOffset: keyOffset))
    }

    /// The original key's canonical bytes that the envelope in `bytes` records; `nil` when
    /// `bytes` is not an envelope.
    static func keyBytes(in bytes: Data) -> Data? {
        bytes.withUnsafeBytes { raw -> Data? in
            guard case .success(let fields) = fields(of: raw) else { return nil }
            return Data(raw[fields.keyOffset...])
        }
    }

    func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// What an entry's envelope says of its payload, for a read of `keyBytes` at `now`.
    @usableFromInline
    enum Check {
        /// The payload (slot 1) is the key's value, in `codec`, live until `expires`, encoded
        /// under `schemaVersion`.
        case payload(codec: ObjectCacheFormat.Codec, expires: Date?, created: Date, schemaVersion: Int)
        /// Another key's entry under the same hashed name.
        case collision
        /// Another format, or no envelope.
        case incompatible
        case expired
    }

    /// Checks the envelope in slot 0 of an entry read for `keyBytes`, where the read left it:
    /// its format must be `codec` (or raw bytes), its key `keyBytes`, and its expiry after
    /// `now`; a version 1 envelope's schema version is `unversioned`. Not generic, so that the
    /// typed read around it, specialized for the caller's types, stays small.
    @usableFromInline
    static func check(
        _ values: ReadValues, keyBytes: Data, now: Date, codec: ObjectCacheFormat.Codec, unversioned: Int
    ) -> Check {
        guard values.count >= 2 else { return .incompatible }
        return values.withBytes(ofSlot: 0) { bytes -> Check in
            guard case .success(let fields) = fields(of: bytes), fields.codec == codec || fields.codec == .raw
            else { return .incompatible }
            let storedKey = UnsafeRawBufferPointer(rebasing: bytes[fields.keyOffset...])
            guard keyBytes.withUnsafeBytes({ $0.elementsEqual(storedKey) }) else { return .collision }
            let expires = fields.expires.isNaN ? nil : Date(timeIntervalSince1970: fields.expires)
            if let expires, expires <= now { return .expired }
            return .payload(
                codec: fields.codec, expires: expires, created: Date(timeIntervalSince1970: fields.created),
                schemaVersion: fields.schemaVersion ?? unversioned)
        }
    }

    private static func read<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> T
    {
        var value: T = 0
        for i in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + i]) << (8 * i) }
        return value
    }
}
