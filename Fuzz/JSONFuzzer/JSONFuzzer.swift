import Foundation
import SwiftyCacheCodable

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

/// Any JSON value, and whether an object in it had a key twice (which one the decoders read
/// is unspecified, so such values are not compared).
indirect enum FuzzValue: Codable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([FuzzValue])
    case object([String: FuzzValue], duplicateKeys: Bool)

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Key.self) {
            var members: [String: FuzzValue] = [:]
            let keys = container.allKeys
            for key in keys { members[key.stringValue] = try container.decode(FuzzValue.self, forKey: key) }
            self = .object(members, duplicateKeys: members.count != keys.count)
        } else if var container = try? decoder.unkeyedContainer() {
            var elements: [FuzzValue] = []
            while !container.isAtEnd { elements.append(try container.decode(FuzzValue.self)) }
            self = .array(elements)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let members, _):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in members { try container.encode(value, forKey: Key(stringValue: key)) }
        }
    }

    var hasDuplicateKeys: Bool {
        switch self {
        case .object(let members, let duplicates): duplicates || members.values.contains { $0.hasDuplicateKeys }
        case .array(let values): values.contains { $0.hasDuplicateKeys }
        default: false
        }
    }

    static func == (lhs: FuzzValue, rhs: FuzzValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a, _), .object(let b, _)): a == b
        default: false
        }
    }
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
    guard let value = try? decoder.decode(FuzzValue.self, from: data) else { return .rejected }
    guard let foundation = try? JSONDecoder().decode(FuzzValue.self, from: data) else {
        guard refusedOnlyForZeroWithExponent(data) else {
            fatalError("accepted, but Foundation refuses: \(String(decoding: data, as: UTF8.self))")
        }
        return .accepted
    }
    if !value.hasDuplicateKeys, foundation != value {
        fatalError("Foundation reads another value from: \(String(decoding: data, as: UTF8.self))")
    }
    guard let written = try? DirectJSONEncoder().encode(value),
        let again = try? decoder.decode(FuzzValue.self, from: written), again == value
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
    return changed && (try? JSONDecoder().decode(FuzzValue.self, from: Data(bytes))) != nil
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
