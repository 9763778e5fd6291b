/// Every file name the cache creates or recognises in its directory, and the one parser of
/// them, as leveldb's `db/filename.h` is for its files. Recovery's sweep is one `switch` over
/// it, and nothing else spells a name.
///
///     journal                  the journal (the Java DiskLruCache's name)
///     journal.tmp              a rebuilt journal being written (Java's name)
///     journal.bkp              the journal a rebuild replaced (Java's name)
///     journal.bkp.N.tmp        an old backup waiting to be unlinked after the lock
///     journal.lock             the advisory lock of the open cache
///     journal.share            the lock of one operation, where several processes write
///     journal.clean            left by a clean close, with the saved index
///     journal.segment.tmp      a segment being created, linked to its own name once whole
///     journal.reserve          space a packed cache sets aside for a full disk
///     journal.pins             the pinned keys (`journal.pins.tmp` while it is replaced)
///     segment-00000001.pack    a packed segment (eight or more digits, never 0)
///     key.N, key.N.tmp         the committed and the staged value of slot N (Java's names)
enum CacheFileName: Hashable, Sendable {
    case journal
    case temporaryJournal
    case backupJournal
    /// A replaced backup journal renamed out of the way, unlinked after the cache lock.
    case journalTrash(UInt64)
    case lock
    /// The lock each operation takes where several processes write (``DiskLRUCache/Sharing``).
    case operationLock
    case cleanMarker
    /// A segment being created: written under this name, then linked to its own, so that a
    /// crash can tear only a file of this name.
    case newSegment
    case spaceReserve
    /// The keys eviction skips (``PinRecord``).
    case pins
    /// A pin record being written, renamed over `journal.pins` once whole and synced.
    case temporaryPins
    case segment(UInt32)
    case value(key: String, slot: Int)
    case stagedValue(key: String, slot: Int)

    static let stagedSuffix = ".tmp"
    private static let segmentPrefix = "segment-"
    private static let segmentSuffix = ".pack"
    private static let trashPrefix = "journal.bkp."

    /// The file's name in the cache directory.
    var name: String {
        switch self {
        case .journal: "journal"
        case .temporaryJournal: "journal.tmp"
        case .backupJournal: "journal.bkp"
        case .journalTrash(let number): Self.trashPrefix + String(number) + Self.stagedSuffix
        case .lock: "journal.lock"
        case .operationLock: "journal.share"
        case .cleanMarker: "journal.clean"
        case .newSegment: "journal.segment.tmp"
        case .spaceReserve: "journal.reserve"
        case .pins: "journal.pins"
        case .temporaryPins: "journal.pins.tmp"
        case .segment(let number):
            Self.segmentPrefix + String(repeating: "0", count: max(0, 8 - String(number).count)) + String(number)
                + Self.segmentSuffix
        case .value(let key, let slot): key + "." + String(slot)
        case .stagedValue(let key, let slot): key + "." + String(slot) + Self.stagedSuffix
        }
    }

    /// What `name` is to the cache; `nil` for a name it never creates.
    ///
    /// - Complexity: O(name's length).
    init?(_ name: String) {
        switch name {
        case "journal": self = .journal
        case "journal.tmp": self = .temporaryJournal
        case "journal.bkp": self = .backupJournal
        case "journal.lock": self = .lock
        case "journal.share": self = .operationLock
        case "journal.clean": self = .cleanMarker
        case "journal.segment.tmp": self = .newSegment
        case "journal.reserve": self = .spaceReserve
        case "journal.pins": self = .pins
        case "journal.pins.tmp": self = .temporaryPins
        default:
            if let number = Self.number(in: name, prefix: Self.trashPrefix, suffix: Self.stagedSuffix, minimumDigits: 1)
            {
                self = .journalTrash(number)
            } else if let number = Self.number(
                in: name, prefix: Self.segmentPrefix, suffix: Self.segmentSuffix, minimumDigits: 8),
                let segment = UInt32(exactly: number), segment > 0
            {
                self = .segment(segment)
            } else if let value = Self.parseValue(name) {
                self = value
            } else {
                return nil
            }
        }
    }

    /// The decimal number between `prefix` and `suffix` (at least `minimumDigits` digits, at
    /// most 19); `nil` if `name` is not of that shape.
    private static func number(in name: String, prefix: String, suffix: String, minimumDigits: Int) -> UInt64? {
        let utf8 = name.utf8
        guard utf8.starts(with: prefix.utf8), utf8.reversed().starts(with: suffix.utf8.reversed()) else { return nil }
        let digits = utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
        guard digits.count >= minimumDigits, digits.count <= 19, digits.allSatisfy(isDigit) else { return nil }
        return digits.reduce(0) { $0 * 10 + UInt64($1 - UInt8(ascii: "0")) }
    }

    /// `key.N` or `key.N.tmp`, with `N` written as the cache writes it (no leading zeros). Keys
    /// may hold dots (Java writes any key it replays), so the slot is the last dotted field
    /// before an optional `.tmp`.
    private static func parseValue(_ name: String) -> CacheFileName? {
        var utf8 = Substring(name).utf8[...]
        let isStaged = utf8.count > 4 && utf8.suffix(4).elementsEqual(stagedSuffix.utf8)
        if isStaged { utf8 = utf8.dropLast(4) }
        guard let dot = utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let keyPart = utf8[..<dot]
        let slotPart = utf8[utf8.index(after: dot)...]
        guard !keyPart.isEmpty, !slotPart.isEmpty, slotPart.count <= 9, slotPart.allSatisfy(isDigit),
            slotPart.count == 1 || slotPart.first != UInt8(ascii: "0")
        else { return nil }
        let slot = slotPart.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        let key = String(decoding: keyPart, as: UTF8.self)
        return isStaged ? .stagedValue(key: key, slot: slot) : .value(key: key, slot: slot)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
