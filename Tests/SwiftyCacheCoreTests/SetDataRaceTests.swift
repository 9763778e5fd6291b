import Dispatch
import Foundation
import SwiftyCacheCore
import SwiftyCacheTestSupport
import Testing

@Suite(.tags(.concurrency)) struct SetDataRaceTests {
    let directory = TemporaryDirectory()

    @Test(arguments: bothStorages) func setDataRacingRemoveNeverFailsAndEndsConsistent(storage: DiskLRUCache.Storage)
        throws
    {
        let cache = try openCache(directory.url, storage: storage)
        let errors = LockedState<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for step in 0..<300 {
                do {
                    if worker % 2 == 0 {
                        try cache.set("k", "\(step)", "\(step)")
                    } else {
                        try cache.removeValue(forKey: "k")
                    }
                } catch let error as CacheError where error.code == .editInProgress {
                    // Two setData calls on one key at the same moment: documented.
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(errors.withLock { $0 } == [])
        if let values = try cache.strings("k") { #expect(values[0] == values[1]) }
        #expect(cache.size == (try storedValueBytes(cache, in: directory.url, storage: storage)))
    }
}
