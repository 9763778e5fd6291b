import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

/// What an `ArchivedObjectCache` stores for an object: the bytes `SCNSA1`, the xxHash64 of
/// the archive (little-endian), then the keyed archive itself.
///
/// Neither direction hands Foundation anything it could stop the process on (see
/// `ArchivedObjectCache`): an object is archived without the archiver's own secure-coding
/// check (which traps on Linux), and the archive is refused unless every class it names
/// supports secure coding, which is the same rule; an archive is unarchived only after its
/// checksum matched and every class it names is allowed.
enum ArchivePayload {
    static let magic = Array("SCNSA1".utf8)

    /// Why an archive was refused.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// The payload of `object`.
    ///
    /// - Throws: `Refusal` for an object graph holding a class that does not support secure
    ///   coding; Foundation's error for an archive that cannot be written.
    static func archive(_ object: any NSObject & NSSecureCoding) throws -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(object, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        let archive = archiver.encodedData
        for name in try classNames(in: archive) {
            let type: AnyClass? = NSClassFromString(name)
            guard let secure = type as? any NSSecureCoding.Type, secure.supportsSecureCoding else {
                throw Refusal(description: "\(name) does not support secure coding")
            }
        }
        var payload = Data(magic)
        var checksum = XXHash64.hash(Array(archive)).littleEndian
        withUnsafeBytes(of: &checksum) { payload.append(contentsOf: $0) }
        payload.append(archive)
        return payload
    }

    /// The object `payload` holds.
    ///
    /// - Throws: `Refusal` for a payload that is damaged, names a class outside `allowed`, or
    ///   holds no `Value`; Foundation's error for an archive it cannot read.
    static func unarchive<Value: NSObject & NSSecureCoding>(
        _ payload: Data, as type: Value.Type, allowing allowed: AllowedClasses
    ) throws -> Value {
        let header = magic.count + 8
        guard payload.count > header, payload.starts(with: magic) else {
            throw Refusal(description: "not an archived object")
        }
        var checksum: UInt64 = 0
        for (index, byte) in payload.dropFirst(magic.count).prefix(8).enumerated() {
            checksum |= UInt64(byte) << (8 * index)
        }
        let archive = payload.dropFirst(header)
        guard XXHash64.hash(Array(archive)) == checksum else { throw Refusal(description: "the archive is damaged") }
        for name in try classNames(in: Data(archive)) where !allowed.names.contains(name) {
            throw Refusal(description: "the archive holds \(name), which is not allowed")
        }
        guard let object = try NSKeyedUnarchiver.unarchivedObject(ofClasses: allowed.classes, from: Data(archive)),
            let value = object as? Value
        else { throw Refusal(description: "the archive holds no \(Value.self)") }
        return value
    }

    /// The names of the classes a keyed archive's objects are of.
    static func classNames(in archive: Data) throws -> Set<String> {
        let root = try PropertyListSerialization.propertyList(from: archive, options: [], format: nil)
        guard let top = root as? [String: Any], top["$archiver"] as? String == "NSKeyedArchiver",
            let objects = top["$objects"] as? [Any], top["$top"] is [String: Any]
        else { throw Refusal(description: "not a keyed archive") }
        var names = Set<String>()
        for case let entry as [String: Any] in objects {
            if let name = entry["$classname"] as? String { names.insert(name) }
        }
        return names
    }
}
