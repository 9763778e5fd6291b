import SwiftyCacheCore

/// libFuzzer entry point for the journal parser. Build and run (see docs/RELIABILITY.md):
///
///     swift build -c release --product journal-fuzzer -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING
///     .build/release/journal-fuzzer -max_total_time=300 Fuzz/corpus
///
/// Besides not crashing, it checks that whatever parses survives a round trip: the lines the
/// parser accepted, written back, parse to the same records.
@_cdecl("LLVMFuzzerTestOneInput")
public func journalFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkJournal(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

func checkJournal(_ bytes: [UInt8]) {
    guard let contents = try? Journal.parse(bytes, appVersion: 1, valueCount: 2) else { return }
    var rewritten = Array("libcore.io.DiskLruCache\n1\n1\n2\n\n".utf8)
    for record in contents.records { Journal.appendLine(record.operation, key: record.key, to: &rewritten) }
    guard let again = try? Journal.parse(rewritten, appVersion: 1, valueCount: 2),
        again.records.elementsEqual(contents.records, by: { $0.key == $1.key && $0.operation == $1.operation }),
        !again.hasUnterminatedLine
    else {
        fatalError("journal round trip differs for input of \(bytes.count) bytes")
    }
}

#if FUZZING
/// libFuzzer's driver, for a program that brings its own entry point.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32

/// SwiftPM links an executable's entry point as `<module>_main`; hand it to libFuzzer.
@_cdecl("journal_fuzzer_main")
public func journalFuzzerMain(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in journalFuzzerTestOneInput(data, size) }
}
#else
import Foundation

/// Without `-DFUZZING`: replays the files given (a corpus or a crash) through the same check.
@main
enum JournalFuzzerReplay {
    static func main() throws {
        for path in CommandLine.arguments.dropFirst() {
            let url = URL(filePath: path)
            let files =
                (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? [url]
            for file in files { checkJournal(Array(try Data(contentsOf: file))) }
            print("replayed \(files.count) inputs from \(path)")
        }
    }
}
#endif
