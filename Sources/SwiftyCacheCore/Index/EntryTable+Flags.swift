/// The editor and the journaled edit of an entry, which an edit sets and clears.
extension EntryTable {
    mutating func setEditor(_ index: Int, _ editorID: UInt64) {
        if editorID == 0 {
            records[index].flags.remove(.editing)
            editors[index] = nil
        } else {
            records[index].flags.insert(.editing)
            editors[index] = editorID
        }
    }

    mutating func setDirtyJournaled(_ index: Int, _ isJournaled: Bool) {
        if isJournaled {
            records[index].flags.insert(.dirtyJournaled)
        } else {
            records[index].flags.remove(.dirtyJournaled)
        }
    }
}
