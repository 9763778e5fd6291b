/// Receives the bytes of one slot being staged.
protocol SlotSink: AnyObject {
    /// The number of bytes written so far.
    var count: Int { get }
    /// Appends bytes to the slot.
    func write(_ bytes: UnsafeRawBufferPointer) throws(CacheError)
}
