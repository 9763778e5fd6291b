import Foundation
import SwiftyCacheCore

/// libFuzzer entry point for packed directories: each input becomes a packed cache directory (a
/// journal under a valid header, and a segment after a valid segment header), which is opened,
/// read key by key, written to and read again. Build and run (see docs/RELIABILITY.md):
///
///     swift build -c release --scratch-path .build-fuzz --product packed-fuzzer \
///         -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING
///     .build-fuzz/release/packed-fuzzer -runs=1000000 Fuzz/packed-corpus
///
/// Input layout: byte 0 picks the inline limit (64 or 16 KiB), bytes 1–2 (little-endian) how
/// many of the bytes that follow are journal lines; the rest is the segment's records. Besides
/// not crashing, hanging or allocating past libFuzzer's limit (`-rss_limit_mb`), it checks that
/// every value read has the length its journal line claims, and that a value written after
/// opening reads back exactly.
@_cdecl("LLVMFuzzerTestOneInput")
public func packedFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    checkPackedDirectory(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Where the directories are made: memory, when there is a tmpfs for it.
let fuzzRoot: URL = {
    let shm = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
    let base = FileManager.default.fileExists(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
    return base.appending(
        path: "swiftycache-packed-fuzz-\(ProcessInfo.processInfo.processIdentifier)", directoryHint: .isDirectory)
}()

func checkPackedDirectory(_ bytes: [UInt8]) {
    let directory = fuzzRoot.appending(path: "case", directoryHint: .isDirectory)
    try? FileManager.default.removeItem(at: directory)
    defer { try? FileManager.default.removeItem(at: directory) }
    guard (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil else {
        return
    }
    let inlineLimit = (bytes.first ?? 0) & 1 == 0 ? 64 : 16 << 10
    let claimed = bytes.count >= 3 ? Int(bytes[1]) | Int(bytes[2]) << 8 : 0
    let body = bytes.dropFirst(3)
    let journalCount = min(claimed, body.count)
    let header = Array("swiftycache.packed\n1\n1\n2\n\(inlineLimit)\n\n".utf8)
    let segment = Array("swiftycache.seg\n".utf8) + body.dropFirst(journalCount)
    guard (try? Data(header + body.prefix(journalCount)).write(to: directory.appending(path: "journal"))) != nil,
        (try? Data(segment).write(to: directory.appending(path: "segment-00000001.pack"))) != nil
    else { return }
    let cache: DiskLRUCache
    do {
        cache = try DiskLRUCache(
            directory: directory, appVersion: 1, valueCount: 2, maxSize: 1 << 30,
            options: DiskLRUCache.Options(storage: .packed(inlineLimit: inlineLimit)))
    } catch {
        return  // refused (not a cache directory, say): an error, not a crash
    }
    defer { try? cache.close() }
    for key in (try? cache.keys()) ?? [] {
        guard let snapshot = try? cache.snapshot(forKey: key) else { continue }
        defer { snapshot.close() }
        let values = (0..<2).compactMap { try? snapshot.readData(at: $0) }
        if values.count == 2, values.map(\.count) != snapshot.lengths {
            fatalError("a value of \(key) read \(values.map(\.count)) bytes, its entry says \(snapshot.lengths)")
        }
    }
    let written = [Data("fuzz".utf8), Data(repeating: 7, count: 100)]
    guard (try? cache.setData(written, forKey: "after-fuzz")) != nil else { return }
    guard let read = try? cache.data(forKey: "after-fuzz"), read == written else {
        fatalError("a value written after opening did not read back")
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
@_cdecl("packed_fuzzer_main")
public func packedFuzzerMain(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in packedFuzzerTestOneInput(data, size) }
}
#else
/// Without `-DFUZZING`: replays the files given (a corpus or a crash) through the same check.
@main
enum PackedFuzzerReplay {
    static func main() throws {
        for path in CommandLine.arguments.dropFirst() {
            let url = URL(filePath: path)
            let files =
                (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? [url]
            for file in files { checkPackedDirectory(Array(try Data(contentsOf: file))) }
            print("replayed \(files.count) inputs from \(path)")
        }
    }
}
#endif
