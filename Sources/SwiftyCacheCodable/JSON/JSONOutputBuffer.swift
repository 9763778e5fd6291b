/// The bytes one encode writes: a growable buffer written through a pointer.
///
/// An encode appends forty or more pieces for a small model value (a bracket, a comma, a
/// member's name and its quotes, each value); through `[UInt8]` every append paid the array's
/// uniqueness and capacity checks and a generic copy (about ninety instructions for a run of
/// bytes). Here an append is a capacity check and a store or a `memcpy`. The buffer is not
/// copyable: one encoding state owns it, and frees it when the state goes.
///
/// Capacity grows by doubling, so appending n bytes is O(n) amortized.
struct JSONOutputBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    /// The bytes it holds before it grows.
    private(set) var capacity: Int
    /// The number of bytes written.
    private(set) var count = 0

    /// An empty buffer with room for `capacity` bytes before it grows.
    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(toAtLeast: count + extra) }
    }

    @inline(never)
    private mutating func grow(toAtLeast minimum: Int) {
        let (doubled, overflow) = capacity.multipliedReportingOverflow(by: 2)
        let newCapacity = overflow ? minimum : max(doubled, minimum)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Forgets what was written, keeping the memory.
    mutating func removeAll() { count = 0 }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends two bytes.
    @inline(__always)
    mutating func append(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[count] = first
        base[count + 1] = second
        count += 2
    }

    /// Appends `bytes`.
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends `bytes` between two quotation marks, with one capacity check.
    mutating func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count + 2)
        base[count] = UInt8(ascii: "\"")
        if let source = bytes.baseAddress { (base + count + 1).initialize(from: source, count: bytes.count) }
        count += bytes.count + 2
        base[count - 1] = UInt8(ascii: "\"")
    }

    /// Calls `body` with `length` bytes of room at the end and keeps what it reports it wrote
    /// (at most `length`): for text written back to front, such as an integer's digits.
    mutating func appendWriting(
        atMost length: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Int
    ) {
        reserve(length)
        let written = body(UnsafeMutableBufferPointer(start: base + count, count: length))
        count += min(max(written, 0), length)
    }

    /// Appends bytes `range` of what was written to `output`.
    func copy(_ range: Range<Int>, to output: inout [UInt8]) {
        let range = range.clamped(to: 0..<count)
        output.append(contentsOf: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }
}
