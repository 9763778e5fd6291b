/// Things an ``ObjectCache`` handled on its own and reports to its event handler.
public enum ObjectCacheEvent<Key: Sendable>: Sendable {
    /// A stored value no longer decodes (the type changed); it was removed and read as a miss.
    case decodingFailed(key: Key, error: any Error)
    /// An entry written in another format or envelope version was read as a miss and removed.
    case incompatibleEntry(key: Key)
    /// Another key's value sits under the same hash; it was read as a miss.
    case hashCollision(key: Key)
    /// An expired entry was removed.
    case expired(key: Key)
    /// Saving an unsaved value failed while it was being evicted from memory; it stays in memory.
    case saveFailed(key: Key, error: any Error)
}
