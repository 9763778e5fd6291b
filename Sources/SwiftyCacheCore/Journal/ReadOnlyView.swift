/// What a read-only cache knows of the journal it replayed: which file it was, how far it was
/// read, and which keys the writer has touched since.
///
/// The writer journals `DIRTY` before it replaces any value file and `REMOVE` before it deletes
/// one, so a read that opened an entry's files and then finds no new `DIRTY`, `CLEAN` or
/// `REMOVE` of its key in the journal read the files the journal described: never a mix of
/// two commits. A journal replaced by a rebuild (another inode) voids the view: the cache
/// replays the new one and reads again.
///
/// - Complexity: each read scans only the bytes appended since the previous read (amortized
///   O(1) per line the writer appends); memory is the set of changed keys and one line.
struct ReadOnlyView {
    let path: String
    private(set) var fd: Int32
    let identity: FileIdentity
    /// The offset up to which the journal was examined.
    private var scanned: Int64
    /// A partial last line, waiting for its end.
    private var pending: [UInt8] = []
    private(set) var changedKeys: Set<String> = []
    /// The keys of the `CLEAN` and `REMOVE` lines appended since the replay, in order: what
    /// changed for a reader's ``DiskLRUCache/changes(bufferingKeys:)`` (a `MOVE` moves a value
    /// without changing it, a `DIRTY` only starts an edit).
    private(set) var changedInOrder: [String] = []
    /// Whether the file at `path` is no longer the one replayed.
    private(set) var isReplaced = false

    init(path: String, fd: Int32, identity: FileIdentity, replayedUpTo offset: Int64) {
        self.path = path
        self.fd = fd
        self.identity = identity
        self.scanned = offset
    }

    func hasChanged(_ key: String) -> Bool { isReplaced || changedKeys.contains(key) }

    /// Where the first line not yet read whole starts.
    var lineStart: Int64 { scanned - Int64(pending.count) }

    /// Reads what the writer appended since the last call, and notes a replaced journal.
    mutating func catchUp(fileSystem: any FileSystem) {
        guard !isReplaced else { return }
        guard let status = try? fileSystem.status(atPath: path), status.identity == identity else {
            isReplaced = true
            return
        }
        // Nothing appended since: no buffer, no read (the common case of a quiet writer).
        guard status.size > scanned else { return }
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { (try? fileSystem.read(fd, into: $0, at: scanned)) ?? 0 }
            if count == 0 { return }
            scanned += Int64(count)
            for byte in chunk[0..<count] {
                if byte == UInt8(ascii: "\n") {
                    noteLine()
                    pending.removeAll(keepingCapacity: true)
                } else if pending.count <= JournalParser.keyAllowance {
                    pending.append(byte)
                }
            }
        }
    }

    /// Remembers the key of a `DIRTY`, `CLEAN` or `REMOVE` line (a `READ` changes nothing).
    private mutating func noteLine() {
        var line = pending[...]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return }
        let verb = line[..<space]
        guard !verb.elementsEqual("READ".utf8) else { return }
        let rest = line[(space + 1)...]
        let key = String(decoding: rest[..<(rest.firstIndex(of: UInt8(ascii: " ")) ?? rest.endIndex)], as: UTF8.self)
        changedKeys.insert(key)
        if verb.elementsEqual("CLEAN".utf8) || verb.elementsEqual("REMOVE".utf8) { changedInOrder.append(key) }
    }

    mutating func close(fileSystem: any FileSystem) {
        if fd >= 0 { try? fileSystem.close(fd) }
        fd = -1
    }
}
