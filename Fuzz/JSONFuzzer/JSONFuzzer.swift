import Foundation
import SwiftyCacheCodable
import SwiftyCacheTestSupport

/// Fuzzing of `DirectJSONDecoder` with hostile bytes. Each input is decoded as a generic JSON
/// value, a typed note, a dictionary and an array of numbers. Besides not crashing, hanging or
/// allocating past a small multiple of the input, it checks that:
/// - what the decoder accepts, Foundation's `JSONDecoder` accepts too, to an equal value
///   (Foundation is the more lenient: it also takes trailing commas);
/// - what it accepts, `DirectJSONEncoder` writes back and it reads to an equal value.
///
/// Two ways to run it (see docs/RELIABILITY.md):
///
///     # coverage-guided, with libFuzzer
///     swift build -c release --scratch-path .build-fuzz --product json-fuzzer \
///         -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING
///     .build-fuzz/release/json-fuzzer -runs=1000000 -malloc_limit_mb=64 -max_len=65536 /tmp/json-corpus
///
///     # mutations of built-in seeds, no libFuzzer needed
///     swift run -c release json-fuzzer --mutate 1000000
@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = checkJSON(Data(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// A typed value of the shapes a cache holds.
struct FuzzNote: Codable, Equatable {
    var id: Int
    var title: String
    var tags: [String]
    var created: Date
    var rating: Double?
    var flags: [String: Bool]?
    var payload: Data?
}

/// What one input did: accepted as a generic value or not.
enum FuzzOutcome { case accepted, rejected }

/// Decodes `data` every way; stops the process on a broken property.
func checkJSON(_ data: Data) -> FuzzOutcome {
    let decoder = DirectJSONDecoder()
    _ = try? decoder.decode(FuzzNote.self, from: data)
    _ = try? decoder.decode([String: Int].self, from: data)
    _ = try? decoder.decode([Double].self, from: data)
    if let table = try? DirectJSONDecoder.tableByteCount(for: data), table > 12 * data.count + 4096 {
        fatalError("a table of \(table) bytes for \(data.count) bytes of input")
    }
    guard let value = try? decoder.decode(AnyJSON.self, from: data) else { return .rejected }
    guard let foundation = try? JSONDecoder().decode(AnyJSON.self, from: data) else {
        guard refusedOnlyForZeroWithExponent(data) else {
            fatalError("accepted, but Foundation refuses: \(String(decoding: data, as: UTF8.self))")
        }
        return .accepted
    }
    if !value.hasDuplicateNames, foundation != value {
        fatalError("Foundation reads another value from: \(String(decoding: data, as: UTF8.self))")
    }
    guard let written = try? DirectJSONEncoder().encode(value),
        let again = try? decoder.decode(AnyJSON.self, from: written), again == value
    else {
        fatalError("does not round-trip: \(String(decoding: data, as: UTF8.self))")
    }
    return .accepted
}

/// Whether Foundation refuses `data` only for a number like `0e4` (a zero with an exponent and no
/// fraction): valid JSON (RFC 8259) that Foundation's scanner refuses, though it reads `-0e4` and
/// `0e+4`. No encoder writes it; the built-in decoder reads it.
func refusedOnlyForZeroWithExponent(_ data: Data) -> Bool {
    var bytes = Array(data)
    var index = 0
    var changed = false
    while index + 1 < bytes.count {
        let startsNumber = index == 0 || !"0123456789.-+eE\"".utf8.contains(bytes[index - 1])
        if startsNumber, bytes[index] == UInt8(ascii: "0"), bytes[index + 1] | 0x20 == UInt8(ascii: "e") {
            bytes.insert(contentsOf: ".0".utf8, at: index + 1)
            changed = true
        }
        index += 1
    }
    return changed && (try? JSONDecoder().decode(AnyJSON.self, from: Data(bytes))) != nil
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
@_cdecl("json_fuzzer_main")
public func jsonFuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in jsonFuzzerTestOneInput(data, size) }
}
#else
@main
enum JSONFuzzerMain {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--mutate" {
            let count = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
            let seed = arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : 1
            MutationRun(cases: count, seed: seed).run()
            return
        }
        // Replays the files given (a corpus or a crash) through the same check.
        for path in arguments {
            let url = URL(filePath: path)
            let files =
                (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? [url]
            for file in files { _ = checkJSON(try Data(contentsOf: file)) }
            print("replayed \(files.count) inputs from \(path)")
        }
    }
}
#endif
