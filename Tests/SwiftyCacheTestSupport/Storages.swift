public import SwiftyCacheCore

/// The storages every behaviour and reliability test runs against: file storage (the Java
/// layout) and packed storage with the default inline limit.
public let bothStorages: [DiskLRUCache.Storage] = [.files, .packed]
