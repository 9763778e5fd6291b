/// Takes `count` elements of `sequence`, or what came within 120 seconds (a bound on a failure,
/// so that an element that never comes fails the test instead of hanging it).
public func collect<S: AsyncSequence & Sendable>(_ count: Int, from sequence: S) async -> [S.Element]
where S.Element: Sendable, S.Failure == Never {
    await withTaskGroup(of: [S.Element]?.self) { group in
        group.addTask {
            var taken: [S.Element] = []
            for await element in sequence {
                taken.append(element)
                if taken.count == count { break }
            }
            return taken
        }
        group.addTask {
            _ = await Watchdog.expire(after: 120)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first ?? []
    }
}
