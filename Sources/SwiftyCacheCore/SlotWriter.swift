#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Receives the bytes of one slot inside ``Editor/write(at:_:)``.
public final class SlotWriter {
    private let sink: any SlotSink
    private let key: String
    var isOpen = true

    init(sink: any SlotSink, key: String) {
        self.sink = sink
        self.key = key
    }

    /// The number of bytes written so far.
    public var count: Int { sink.count }

    /// Appends `data` to the slot.
    ///
    /// - Throws: ``CacheError/Code/ioFailure``, or ``CacheError/Code/editorFinished`` after the
    ///   write closure returned.
    public func write(_ data: Data) throws {
        try data.withUnsafeBytes { try write(bytes: $0) }
    }

    /// Appends raw bytes to the slot.
    ///
    /// - Throws: The errors of ``write(_:)``.
    public func write(bytes: UnsafeRawBufferPointer) throws {
        guard isOpen else { throw CacheError.slotWriterClosed(key: key) }
        try sink.write(bytes)
    }
}
