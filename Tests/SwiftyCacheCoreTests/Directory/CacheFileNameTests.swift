import Testing

@testable import SwiftyCacheCore

/// The names of every file the cache creates or recognises in its directory: the specification
/// of the directory's layout, and of which names the cache takes for its own.
@Suite struct CacheFileNameTests {
    @Test(arguments: [
        (CacheFileName.journal, "journal"),
        (.temporaryJournal, "journal.tmp"),
        (.backupJournal, "journal.bkp"),
        (.journalTrash(17), "journal.bkp.17.tmp"),
        (.lock, "journal.lock"),
        (.cleanMarker, "journal.clean"),
        (.newSegment, "journal.segment.tmp"),
        (.spaceReserve, "journal.reserve"),
        (.segment(1), "segment-00000001.pack"),
        (.segment(4_000_000_000), "segment-4000000000.pack"),
        (.value(key: "k1", slot: 0), "k1.0"),
        (.value(key: "a.b", slot: 12), "a.b.12"),
        (.stagedValue(key: "k1", slot: 1), "k1.1.tmp"),
        (.value(key: "journal", slot: 0), "journal.0"),
    ])
    func everyNameIsWrittenAndParsedAsTheSameFile(file: CacheFileName, name: String) {
        #expect(file.name == name)
        #expect(CacheFileName(name) == file)
    }

    @Test(arguments: [
        "notes.txt", "journal.old", "segment-1.pack", "segment-00000000.pack", "segment-0000000x.pack",
        "segment-99999999999.pack", "k.01", "k.", ".0", "k.0.TMP", "k.1234567890", "journal.bkp.tmp",
        "journal.bkp.x.tmp", "",
    ])
    func namesTheCacheNeverWritesAreNotItsOwn(name: String) {
        #expect(CacheFileName(name) == nil)
    }

    @Test func aStagedValueIsNotTakenForAJournalFile() {
        #expect(CacheFileName("journal.0.tmp") == .stagedValue(key: "journal", slot: 0))
        #expect(CacheFileName("journal.tmp") == .temporaryJournal)
    }
}
