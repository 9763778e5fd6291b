/// What a read found, at every depth of the read path: a record read by packed storage, values
/// read from memory only, an entry read by the facade, a typed value read by the layer above.
package enum ReadResult<Value> {
    /// The values.
    case found(Value)
    /// No values: a miss. From a storage: missing or damaged values, for the caller to deal
    /// with (the facade drops the entry, or reads the full way to find out).
    case missing
    /// Reading would wait for the disk, or needs file I/O to deal with what it found: nothing
    /// was done (a read from memory only answers this, for the caller to read on an I/O thread).
    case needsIO
}

extension ReadResult: Sendable where Value: Sendable {}
