import Foundation

extension FaultInjectingFileSystem {
    /// The regular files of `directory` as a crash leaves them, in a new directory. After a
    /// power cut (`powerCut`, with ``recordSyncs()`` called before the files were written) each
    /// keeps what its last successful sync covered, with the bytes a failed sync should have
    /// covered zeroed (``droppedRanges(ofFileAt:)``: the kernel may mark such pages clean and
    /// call the next sync a success); after a kill, everything written.
    package func crashCopy(of directory: TemporaryDirectory, powerCut: Bool) throws -> TemporaryDirectory {
        let copy = TemporaryDirectory("crash-copy")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let source = directory.appending(name)
            guard (try? source.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            var bytes = try Data(contentsOf: source)
            if powerCut {
                let path = source.path(percentEncoded: false)
                bytes = bytes.prefix(Int(syncedSize(ofFileAt: path) ?? 0))
                for lost in droppedRanges(ofFileAt: path) {
                    let range = Int(lost.lowerBound)..<min(Int(lost.upperBound), bytes.count)
                    if !range.isEmpty { bytes.replaceSubrange(range, with: Data(count: range.count)) }
                }
            }
            try bytes.write(to: copy.appending(name))
        }
        return copy
    }
}
