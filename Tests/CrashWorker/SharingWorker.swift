import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CrashWorker {
    /// `shared-writer DIR COUNT`: in sharing mode, sets `k` to `v0`, `v1`, … one at a time,
    /// printing `wrote N` once each set returned and waiting for a line on its input before
    /// the next: the test reads each value in its own process at once.
    static func writeSharedInTurn(_ directory: String, count: Int) -> Never {
        var options = DiskLRUCache.Options(storage: .packed)
        options.sharing = .processes
        do {
            let cache = try DiskLRUCache(
                directory: URL(filePath: directory), appVersion: 1, valueCount: 1, maxSize: 1 << 30, options: options)
            for index in 0..<count {
                try cache.setData([Data("v\(index)".utf8)], forKey: "k")
                say("wrote \(index)")
                guard readLine() != nil else { exit(0) }
            }
            try cache.close()
            exit(0)
        } catch {
            say("failed \(error)")
            exit(3)
        }
    }

    /// `sharer DIR LOG SEED SEQ-BASE MAX-SIZE [sync]`: one of several processes writing DIR in
    /// sharing mode (packed, 16 KiB segments, so that segments roll and compaction runs), a
    /// random workload over 40 keys every process shares, until killed. Each operation is
    /// logged before it starts and after it returns, with the system's monotonic clock (one
    /// clock for every process): `B VERB KEYS SEQ NANOS`, `C NANOS`. A value read that is torn,
    /// mixed or another key's ends the process with status 3.
    static func shareUntilKilled(_ arguments: [String]) -> Never {
        guard arguments.count >= 6, let seed = UInt64(arguments[3]), let base = Int(arguments[4]),
            let maxSize = Int(arguments[5])
        else { exit(2) }
        let log = open(arguments[2], O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard log >= 0 else { exit(2) }
        func now() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
        func record(_ line: String) {
            // A kill, not a power cut: what `write` handed the kernel stays.
            let bytes = Array((line + " \(now())\n").utf8)
            _ = bytes.withUnsafeBytes { write(log, $0.baseAddress, $0.count) }
        }
        var options = DiskLRUCache.Options(
            syncsWrites: arguments.count == 7 && arguments[6] == "sync", storage: .packed(inlineLimit: 4096))
        options.sharing = .processes
        options.packedSegmentSize = 16 << 10
        let cache: DiskLRUCache
        do {
            cache = try DiskLRUCache(
                directory: URL(filePath: arguments[1]), appVersion: 1, valueCount: 2, maxSize: maxSize,
                options: options)
        } catch {
            FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
            exit(4)
        }
        say("ready")
        var generator = SplitMix(state: seed)
        var sequence = base
        func values(_ key: String) -> [Data] {
            (0..<2).map {
                CheckedValue.make(key: key, slot: $0, sequence: sequence, fillerLength: Int(generator.next() % 600))
            }
        }
        while true {
            sequence += 1
            let key = "k\(generator.next() % 40)"
            let choice = generator.next() % 100
            do {
                switch choice {
                case 0..<45:
                    let pair = values(key)
                    record("B SET \(key) \(sequence)")
                    try cache.setData(pair, forKey: key)
                    record("C")
                case 45..<52:
                    var keys: [String] = []
                    while keys.count < 3 {
                        let other = "k\(generator.next() % 40)"
                        if !keys.contains(other) { keys.append(other) }
                    }
                    var batch = DiskLRUCache.WriteBatch()
                    for batchKey in keys { batch.setData(values(batchKey), forKey: batchKey) }
                    record("B BATCH \(keys.joined(separator: ",")) \(sequence)")
                    try cache.write(batch)
                    record("C")
                case 52..<62:
                    record("B REMOVE \(key) \(sequence)")
                    _ = try cache.removeValue(forKey: key)
                    record("C")
                case 62..<99:
                    if let read = try cache.data(forKey: key), !CheckedValue.isConsistentPair(read, key: key) {
                        FileHandle.standardError.write(Data("torn or mixed read of \(key)\n".utf8))
                        exit(3)
                    }
                default:
                    try cache.compact()
                }
            } catch {
                FileHandle.standardError.write(Data("operation failed: \(error)\n".utf8))
                exit(5)
            }
        }
    }
}
