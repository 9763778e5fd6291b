extension XXHash64 {
    /// XXH64 of bytes that arrive in pieces: the same value as ``XXHash64/hash(_:seed:)`` of
    /// their concatenation, without holding it (the saved index is written and read through a
    /// buffer of bounded size).
    struct Stream {
        private var v1: UInt64
        private var v2: UInt64
        private var v3: UInt64
        private var v4: UInt64
        private let seed: UInt64
        /// Bytes of an incomplete 32-byte stripe (fewer than 32).
        private var pending: [UInt8] = []
        private var length = 0

        init(seed: UInt64 = 0) {
            self.seed = seed
            v1 = seed &+ prime1 &+ prime2
            v2 = seed &+ prime2
            v3 = seed
            v4 = seed &- prime1
            pending.reserveCapacity(32)
        }

        /// Adds `bytes`.
        ///
        /// - Complexity: O(bytes).
        mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            length &+= bytes.count
            var index = 0
            if !pending.isEmpty {
                let taken = Swift.min(32 &- pending.count, bytes.count)
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<taken]))
                index = taken
                guard pending.count == 32 else { return }
                pending.withUnsafeBytes { stripe in
                    if let stripeBase = stripe.baseAddress { consumeStripe(stripeBase, 0) }
                }
                pending.removeAll(keepingCapacity: true)
            }
            while bytes.count &- index >= 32 {
                consumeStripe(base, index)
                index &+= 32
            }
            if index < bytes.count { pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index...])) }
        }

        @inline(__always)
        private mutating func consumeStripe(_ base: UnsafeRawPointer, _ index: Int) {
            v1 = round(v1, read64(base, index))
            v2 = round(v2, read64(base, index &+ 8))
            v3 = round(v3, read64(base, index &+ 16))
            v4 = round(v4, read64(base, index &+ 24))
        }

        /// The hash of everything added.
        func finalize() -> UInt64 {
            var hash: UInt64
            if length >= 32 {
                hash = converge(v1, v2, v3, v4)
            } else {
                hash = seed &+ prime5
            }
            return pending.withUnsafeBytes { tail in
                finish(hash, base: tail.baseAddress, from: 0, to: tail.count, length: length)
            }
        }
    }
}
