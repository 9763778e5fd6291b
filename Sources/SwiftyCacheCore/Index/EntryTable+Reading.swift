/// What the read paths and eviction ask of one entry of the index.
extension EntryTable {
    /// The committed lengths of the entry at `index` if it is readable: the read path's one
    /// look at it.
    func readableLengths(_ index: Int) -> SlotLengths? {
        let record = records[index]
        guard record.isLive, record.isReadable else { return nil }
        return lengths(of: record, at: index)
    }

    /// The sum of the lengths of the entry at `index`; `nil` if it overflows.
    func totalLength(_ index: Int) -> Int? { lengths(of: records[index], at: index).total }

    /// The sequence number of the entry at `index`.
    func sequenceNumber(_ index: Int) -> UInt64 { records[index].sequenceNumber }

    /// Where the values of the entry at `index` are.
    func location(_ index: Int) -> ValueLocation { location(of: records[index], at: index) }

    /// Whether the entry at `index` has been committed.
    func isReadable(_ index: Int) -> Bool { records[index].isLive && records[index].isReadable }
}
