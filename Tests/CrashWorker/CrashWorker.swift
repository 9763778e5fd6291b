import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a random workload against a cache until it is killed, logging each operation to a
/// side log before it starts (`B ...`) and after it completes (`C`), with `fsync`, so the
/// crash test knows what was committed and what was in flight at the kill.
///
/// Usage: swiftycache-crash-worker DIRECTORY SIDE-LOG SEED SEQUENCE-BASE MAX-SIZE
@main
enum CrashWorker {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 6, let seed = UInt64(arguments[3]), let base = Int(arguments[4]),
            let maxSize = Int(arguments[5])
        else {
            FileHandle.standardError.write(
                Data("usage: swiftycache-crash-worker DIR LOG SEED SEQ-BASE MAX-SIZE\n".utf8))
            exit(2)
        }
        let log = open(arguments[2], O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard log >= 0 else { exit(2) }
        func record(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(log, $0.baseAddress, $0.count) }
            fsync(log)
        }
        let cache: DiskLRUCache
        do {
            cache = try DiskLRUCache(
                directory: URL(filePath: arguments[1]), appVersion: 1, valueCount: 2, maxSize: maxSize)
        } catch {
            FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
            exit(4)
        }
        var generator = SplitMix(state: seed)
        var sequence = base
        while true {
            sequence += 1
            let key = "k\(generator.next() % 30)"
            let filler = Int(generator.next() % 3000)
            let choice = generator.next() % 100
            do {
                switch choice {
                case 0..<40:
                    record("B SET \(key) \(sequence)")
                    try cache.setData(
                        (0..<2).map { CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: filler) },
                        forKey: key)
                    record("C")
                case 40..<60:
                    guard try cache.contains(key) else { continue }
                    record("B PARTIAL \(key) \(sequence)")
                    do {
                        try cache.setPartialData(
                            [1: CheckedValue.make(key: key, slot: 1, sequence: sequence, fillerLength: filler)],
                            forKey: key)
                    } catch let error as CacheError where error.code == .entryNotFound {
                        // Evicted in the background since `contains`: the update did not apply.
                        record("B ABORTED - \(sequence)")
                    }
                    record("C")
                case 60..<75:
                    record("B REMOVE \(key) \(sequence)")
                    try cache.remove(key)
                    record("C")
                case 75..<95:
                    if let values = try cache.data(forKey: key) {
                        for (slot, value) in values.enumerated() {
                            guard let parsed = CheckedValue.parse(value), parsed.key == key, parsed.slot == slot else {
                                FileHandle.standardError.write(Data("corrupt read of \(key) slot \(slot)\n".utf8))
                                exit(3)
                            }
                        }
                    }
                default:
                    record("B FLUSH - \(sequence)")
                    try cache.flush()
                    record("C")
                }
            } catch {
                FileHandle.standardError.write(Data("operation failed: \(error)\n".utf8))
                exit(5)
            }
        }
    }
}
