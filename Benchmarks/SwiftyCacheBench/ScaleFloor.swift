import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The floor of a random get at scale (`--workload scale`): `count` `pread`s of one record's
/// bytes at random places in the packed cache's segments, the files a get reads, with no index,
/// no lock and no check. What it costs at ten million entries against ten thousand is what the
/// kernel's page cache and the machine's memory make of a random read through gigabytes of
/// files, before any index.
enum ScaleFloor {
    static func randomSegmentReads(in directory: URL, count: Int, recordBytes: Int) -> Run? {
        let path = directory.path(percentEncoded: false)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return nil }
        var files: [(fd: Int32, size: Int)] = []
        defer { for file in files { close(file.fd) } }
        for name in names.sorted() where name.hasPrefix("segment-") && name.hasSuffix(".pack") {
            let fd = open(path + "/" + name, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var status = stat()
            guard fstat(fd, &status) == 0, Int(status.st_size) > recordBytes else {
                close(fd)
                continue
            }
            files.append((fd, Int(status.st_size)))
        }
        guard !files.isEmpty else { return nil }
        // Cumulative sizes: a random byte of all the segments picks the file, as a random entry would.
        var ends: [Int] = []
        var total = 0
        for file in files {
            total += file.size - recordBytes
            ends.append(total)
        }
        var generator = SeededGenerator(seed: 17)
        var buffer = [UInt8](repeating: 0, count: recordBytes)
        return buffer.withUnsafeMutableBytes { bytes in
            timed(count, perOperation: false) { _ in
                let place = Int(generator.next() % UInt64(total))
                var low = 0
                var high = ends.count - 1
                while low < high {
                    let middle = (low + high) / 2
                    if ends[middle] > place { high = middle } else { low = middle + 1 }
                }
                let offset = place - (low == 0 ? 0 : ends[low - 1])
                keep(pread(files[low].fd, bytes.baseAddress, recordBytes, off_t(offset)))
            }
        }
    }
}
