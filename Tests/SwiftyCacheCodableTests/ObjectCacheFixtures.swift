import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

// The values, keys, clock and helpers the object-cache suites share.

struct Note: Codable, Sendable, Equatable {
    var title: String
    var tags: [String]
    var created: Date
    var body: String
}

struct CompositeKey: Codable, Sendable, Hashable {
    var user: Int
    var page: String
}

/// A value whose binary part is stored raw in its own slot.
struct VoiceNote: Codable, Sendable, Equatable, CacheAttachments {
    var title: String
    var audio = Data()
    enum CodingKeys: String, CodingKey { case title }

    static let attachmentCount = 1
    var attachments: [Data] { [audio] }
    mutating func restoreAttachments(_ parts: [Data]) { audio = parts[0] }
}

/// A clock that moves only when told.
final class TestClock: Sendable {
    private let current = LockedState(Date(timeIntervalSince1970: 1_700_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
    var function: @Sendable () -> Date { { self.now } }
}

/// Every key hashes to the same engine key, to force collisions.
struct ConstantHasher: CacheKeyHasher {
    func engineKey(for keyBytes: Data) -> String { "same" }
}

let sampleNote = Note(
    title: "Hello", tags: ["a", "b"], created: Date(timeIntervalSince1970: 1_000),
    body: String(repeating: "text ", count: 100))

/// Lets one test clear caches of different types in a loop.
protocol ClearableMemory { func clearMemory() }
extension ObjectCache: ClearableMemory {}

/// Slot `slot` of the engine entry that holds `keyBytes` (the key coding's bytes, such as
/// `s:n` for the string key `n`), read through the engine without touching its LRU order.
func engineSlot<Key, Value>(_ slot: Int, of keyBytes: String, in cache: ObjectCache<Key, Value>) throws -> Data {
    let engineKey = cache.keyHasher.engineKey(for: Data(keyBytes.utf8))
    let snapshot = try #require(try cache.disk.peekSnapshot(forKey: engineKey))
    return try snapshot.readData(at: slot)
}
