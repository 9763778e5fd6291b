// Code written against the release before 1.0, as its users wrote it. `.ci/deprecated-spellings`
// compiles this file against the debug build's modules: it must compile, and every line marked
// `// deprecated` must draw one deprecation warning (and no other line any warning), so that each
// old spelling keeps building for one release and says what replaced it.
//
// Not part of any target: the package builds without it, and without its warnings.

import Foundation
import SwiftyCacheCodable
import SwiftyCacheCore

struct Note: Codable, Sendable {
    var text: String
}

func engine(_ directory: URL) throws {
    let options = DiskLRUCache.Options(syncsWrites: false, readOnly: false, storage: nil)  // deprecated
    let cache = try DiskLRUCache(directory: directory, appVersion: 1, valueCount: 1, maxSize: 1 << 20, options: options)
    _ = options.readOnly  // deprecated
    try cache.setData([Data("a".utf8)], forKey: "k")
    _ = try cache.contains("k")  // deprecated
    if let editor = try cache.edit("k") {  // deprecated
        editor.abort()
    }
    if let snapshot = try cache.snapshot(forKey: "k") {
        _ = snapshot.data(at: 0)  // deprecated
        _ = snapshot.string(at: 0)  // deprecated
    }
    try cache.remove("k")  // deprecated
    _ = DiskLRUCache.asyncIOThreadLimit  // deprecated
    _ = cache.recoveryReport.loadedIndexSnapshot  // deprecated
    let failure: SystemCallError? = nil  // deprecated
    _ = failure
    let error = CacheError(code: .ioFailure, message: "", operation: .setData)
    _ = error.operation == "setData"  // deprecated
    switch error.operation {
    case .rebuildJournal?: break  // deprecated
    case .evict?, .cleanup?: break  // deprecated
    case .dropDamagedEntry?, .deinitialize?: break  // deprecated
    case .createDirectory?, .lockDirectory?, .restoreDirectory?: break  // deprecated
    default: break
    }
    try cache.close()
}

func engineAsync(_ cache: DiskLRUCache) async throws {
    try await cache.remove("k")  // deprecated
}

func objects(_ directory: URL) throws {
    let limit = 1 << 20
    let notes = try ObjectCache<String, Note>(directory: directory, maxDiskSize: limit)  // deprecated
    notes["a"] = Note(text: "draft")  // deprecated
    _ = notes["a"]  // deprecated
    try notes.save("a")  // deprecated
    _ = try notes.contains("a")  // deprecated
    try notes.removePermanently(forKey: "a")  // deprecated
    _ = ObjectCacheError.Operation.removePermanently  // deprecated
    _ = ObjectCacheError.Operation.contains  // deprecated
    _ = ObjectCacheFormat.json(configure: nil)  // deprecated
    let objectError = ObjectCacheError(code: .diskFailure, message: "", operation: .save)
    _ = objectError.operation == "save"  // deprecated
    let engineOptions = DiskLRUCache.Options(readOnly: true)  // deprecated
    _ = try? ObjectCache<String, Note>(directory: directory, diskOptions: engineOptions)  // deprecated
    let store = CacheStore(directory: directory)
    _ = try store.objects("notes", of: Note.self, maxDiskSize: 1 << 20)  // deprecated
    try notes.close()
}

func objectsAsync(_ notes: ObjectCache<String, Note>) async throws {
    try await notes.save("a")  // deprecated
    try await notes.removePermanently(forKey: "a")  // deprecated
}
