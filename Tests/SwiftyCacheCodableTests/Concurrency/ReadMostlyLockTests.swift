import Dispatch
import Foundation
import SwiftyCacheTestSupport
import Synchronization
import Testing

@testable import SwiftyCacheCodable

/// The read-mostly lock under the memory tier's stripes: readers enter without the mutex while
/// the gate is open, a writer closes it and waits for the readers inside, the gate reopens
/// after enough reads with no write, and the per-thread counters add up exactly.
@Suite(.tags(.concurrency, .lockFreeReads)) struct ReadMostlyLockTests {
    /// Waits until `condition` holds, yielding the core meanwhile (no sleep, no clock).
    func waitUntil(_ condition: () -> Bool) {
        while !condition() { sched_yield() }
    }

    @Test func readersDoNotTakeTheMutexWhileTheGateIsOpen() {
        let lock = ReadMostlyLock(7)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // Another thread holds the mutex (inspect keeps the gate open).
        let holder = onNewThread {
            lock.inspect { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        #expect(lock.isGateOpen)
        // A read through the mutex would wait for `release`, which only comes after it.
        let reader = onNewThread { #expect(lock.read { $0 } == 7) }
        #expect(reader.wait(timeout: .now() + 30) == .success)
        release.signal()
        holder.wait()
    }

    @Test func aWriterWaitsForTheReadersInsideAndLaterReadersSeeItsWrite() {
        let lock = ReadMostlyLock(0)
        let inside = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let seenInside = Atomic<Int>(-1)
        let reader = onNewThread {
            lock.read { state in
                inside.signal()
                leave.wait()
                seenInside.store(state, ordering: .relaxed)
            }
        }
        inside.wait()
        let wrote = Atomic<Bool>(false)
        let writer = onNewThread {
            lock.withLock {
                $0 = 1
                wrote.store(true, ordering: .relaxed)
            }
        }
        waitUntil { !lock.isGateOpen }  // the writer holds the mutex and has closed the gate
        // While the reader is inside, the writer's body does not run.
        for _ in 0..<1_000 { sched_yield() }
        let wroteWhileInside = wrote.load(ordering: .relaxed)
        #expect(!wroteWhileInside)
        leave.signal()
        reader.wait()
        writer.wait()
        let seen = seenInside.load(ordering: .relaxed)
        #expect(seen == 0)
        #expect(lock.read { $0 } == 1)
    }

    @Test func theGateReopensAfterEnoughReadsWithNoWrite() {
        let lock = ReadMostlyLock(0)
        #expect(lock.isGateOpen)
        lock.withLock { $0 += 1 }
        #expect(!lock.isGateOpen)
        for _ in 0..<(ReadMostlyLock<Int>.reopenAfter - 1) { _ = lock.read { $0 } }
        #expect(!lock.isGateOpen)
        lock.withLock { $0 += 1 }  // a write starts the count again
        for _ in 0..<(ReadMostlyLock<Int>.reopenAfter - 1) { _ = lock.read { $0 } }
        #expect(!lock.isGateOpen)
        _ = lock.read { $0 }
        #expect(lock.isGateOpen)
        #expect(lock.read { $0 } == 2)
        _ = lock.inspect { $0 }  // reading under the mutex does not close it
        #expect(lock.isGateOpen)
    }

    @Test func countersAddUpOverThreadsAndCountOnlyWhatWasFound() {
        let lock = ReadMostlyLock([1, 2, 3])
        let threads = 8
        let perThread = 5_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for i in 0..<perThread {
                // Half the reads find something (counter 0); every one counts counter 1. A write
                // now and then sends the reads after it through the mutex, which count too.
                _ = lock.readCountingFound { state in i % 2 == 0 ? state[thread % 3] : nil }
                lock.count(1)
                if thread == 0 && i % 100 == 0 { lock.withLock { $0[2] = 3 } }
            }
        }
        #expect(lock.total(0) == threads * perThread / 2)
        #expect(lock.total(1) == threads * perThread)
        #expect(lock.total(2) == 0)
        // Counted reads leave no reader behind: a writer gets in.
        lock.withLock { $0[0] = 4 }
        #expect(lock.read { $0[0] } == 4)
    }

    /// Counter 0 shares its word with the slot's reader count; moving the count to the
    /// counter's own word, as reads do long before it could overflow, changes no total and
    /// leaves the reader count alone.
    @Test func theFastLaneSpillsWithoutChangingTheTotals() {
        let lock = ReadMostlyLock(5)
        for _ in 0..<10 { _ = lock.readCountingFound { $0 } }
        lock.count(0)
        #expect(lock.total(0) == 11)
        lock.spillCurrentSlot()
        #expect(lock.total(0) == 11)
        for _ in 0..<5 { _ = lock.readCountingFound { $0 } }
        #expect(lock.total(0) == 16)
        let wrote = onNewThread { lock.withLock { $0 = 6 } }
        #expect(wrote.wait(timeout: .now() + 30) == .success)
        #expect(lock.readCountingFound { $0 } == 6)
        #expect(lock.total(0) == 17)
    }

    @Test func threadsTakeSlotsInTurn() {
        let first = Atomic<Int>(-1)
        let second = Atomic<Int>(-1)
        onNewThread { first.store(ReaderSlots.current, ordering: .relaxed) }.wait()
        onNewThread { second.store(ReaderSlots.current, ordering: .relaxed) }.wait()
        let a = first.load(ordering: .relaxed)
        let b = second.load(ordering: .relaxed)
        #expect(a >= 0 && b >= 0)
        #expect(a != b)
        // A thread keeps its number.
        #expect(ReaderSlots.current == ReaderSlots.current)
    }

    /// Readers never see a write half done, with writers and readers on every core (also run
    /// under ThreadSanitizer in CI).
    @Test func readersNeverSeeAWriteHalfDone() {
        struct Pair {
            var first = 0
            var second = 0
            var history: [Int] = []
        }
        let lock = ReadMostlyLock(Pair())
        let torn = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<4_000 {
                if worker == 0 && i % 8 == 0 {
                    lock.withLock { pair in
                        pair.first += 1
                        pair.history.append(pair.first)
                        pair.second += 1
                    }
                } else {
                    let consistent = lock.read { pair in
                        pair.first == pair.second && pair.history.count == pair.first
                    }
                    if !consistent { torn.add(1, ordering: .relaxed) }
                    reads.add(1, ordering: .relaxed)
                }
            }
        }
        let tornReads = torn.load(ordering: .relaxed)
        let readCount = reads.load(ordering: .relaxed)
        #expect(tornReads == 0)
        #expect(readCount == 3 * 4_000 + 4_000 - 500)
        #expect(lock.inspect { $0.first } == 500)
    }
}
