/// Pinned entries: eviction by size passes them by; their bytes have a ceiling of their own.
extension CacheState {
    /// The pinned keys as they must be on disk, when they differ from what was last written
    /// (``pinsDurableGeneration``): for the caller to write after the lock.
    var pinsToWrite: (generation: UInt64, keys: [String])? {
        guard pinsGeneration != pinsDurableGeneration else { return nil }
        return (pinsGeneration, Array(pins))
    }

    /// The committed bytes of the pinned entries.
    ///
    /// - Complexity: O(pins).
    var pinnedSize: Int {
        var total = 0
        for key in pins {
            guard let index = table.index(of: key), let length = table.totalLength(index) else { continue }
            total = total.addingReportingOverflow(length).overflow ? Int.max : total + length
        }
        return total
    }

    /// The ceiling of the pinned bytes.
    var pinLimit: Int { maxPinnedSize ?? budget.limit(maxSize: maxSize) / 2 }

    /// Pins the entry of `key`: `nil` when it has none; otherwise the keys the caller writes
    /// (none when they are on disk already), claimed for it (``pinsDurableGeneration``).
    ///
    /// - Throws: ``CacheError/Code/pinLimitExceeded`` when its bytes would take the pinned
    ///   bytes past ``pinLimit``.
    /// - Complexity: O(pins), to add up their bytes.
    mutating func pin(key: String) throws(CacheError) -> (generation: UInt64, keys: [String])?? {
        guard !isReadOnly else { throw CacheError.readOnly(operation: .pin, key: key) }
        followOthersPins()
        guard let index = table.index(of: key), table[index].isReadable else { return nil }
        guard !pins.contains(key) else { return .some(claimPinsToWrite()) }
        let limit = pinLimit
        let pinned = pinnedSize
        let entryBytes = table[index].totalLength
        guard entryBytes <= limit, pinned <= limit - entryBytes else {
            throw CacheError.pinLimitExceeded(key: key, pinnedBytes: pinned, entryBytes: entryBytes, limit: limit)
        }
        pins.insert(key)
        pinsGeneration &+= 1
        // The newest in LRU order: the eviction walk, which passes pinned entries, meets it last.
        table.touch(index)
        return .some(claimPinsToWrite())
    }

    /// The keys to write, if they differ from the disk's, marked as written: the caller writes
    /// them (and marks them unwritten again if that fails, ``DiskLRUCache/writePins(_:)``).
    mutating func claimPinsToWrite() -> (generation: UInt64, keys: [String])? {
        let snapshot = pinsToWrite
        pinsDurableGeneration = pinsGeneration
        return snapshot
    }

    /// Unpins `key`; the keys to write when the set changed. The entry, if any, becomes the
    /// newest in LRU order: evicted last among those not read since.
    mutating func unpin(key: String) throws(CacheError) -> (generation: UInt64, keys: [String])? {
        guard !isReadOnly else { throw CacheError.readOnly(operation: .unpin, key: key) }
        followOthersPins()
        guard pins.remove(key) != nil else { return claimPinsToWrite() }
        pinsGeneration &+= 1
        if let index = table.index(of: key) { table.touch(index) }
        return claimPinsToWrite()
    }

    /// Notes that the entry at `index` leaves the index: its pin goes with it.
    mutating func dropPin(at index: Int) {
        guard !pins.isEmpty, pins.remove(table.key(at: index)) != nil else { return }
        pinsGeneration &+= 1
    }

    /// Forgets every pin: the entries went (a wipe, a vanished directory).
    mutating func dropAllPins() {
        guard !pins.isEmpty else { return }
        pins.removeAll()
        pinsGeneration &+= 1
    }

    /// Reads `journal.pins` at open and keeps the keys that name a committed entry; a writer
    /// rewrites the record if it named others (``pinsToWrite``).
    ///
    /// - Complexity: O(keys in the record).
    mutating func loadPins() {
        let recorded = directory.readPins()
        pins = Set(recorded.filter { key in table.index(of: key).map { table[$0].isReadable } ?? false })
        if pins.count != recorded.count && !isReadOnly { pinsGeneration &+= 1 }
    }

    // MARK: Sharing

    /// Writes the pinned keys a change of this hold claimed, now, under the operation lock:
    /// the others read `journal.pins` again when it changed (``followOthersPins()``), and a
    /// set written after the lock could replace a newer one. Returns `change` unwritten where
    /// nobody else writes (the caller writes it after the lock), `nil` once written.
    mutating func writePinsIfShared(
        _ change: (generation: UInt64, keys: [String])?
    ) throws(CacheError) -> (generation: UInt64, keys: [String])? {
        guard isShared, let change else { return change }
        do {
            try directory.writePins(change.keys)
        } catch {
            pinsDurableGeneration = .max
            throw CacheError.ioFailure(error, operation: .pin, path: directory.pinsPath)
        }
        pinsFileStatus = try? fileSystem.status(atPath: directory.pinsPath)
        return nil
    }

    /// Reads `journal.pins` again if another cache replaced it since this one last did: before
    /// eviction passes pinned entries by, and before a pin or an unpin.
    ///
    /// - Complexity: one `lstat`; O(pinned keys) when it changed.
    mutating func followOthersPins() {
        guard isShared else { return }
        let status = try? fileSystem.status(atPath: directory.pinsPath)
        guard status != pinsFileStatus else { return }
        pinsFileStatus = status
        loadPins()
    }
}
