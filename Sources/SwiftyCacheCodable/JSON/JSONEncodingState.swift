#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bytes being written and the containers open on them, shared by every container and
/// encoder handed out during one `encode`.
///
/// Values are written in the order their `encode(to:)` runs, straight into `bytes`: a nested
/// value's `encode(to:)` returns before its parent writes again, so open containers form a
/// stack (`frames`). The two ways a container can be written after its parent goes on,
/// `nestedContainer` and `superEncoder`, get a state of their own, spliced in at the end.
///
/// Reference semantics without a lock: one `encode` call uses it, on one thread. A cache's
/// format keeps a finished state for its next encode (``JSONEncodingStateSlot``), handed from
/// one call to the next through the slot's flag, never to two calls at once.
///
/// Its hot properties opt out of the runtime's dynamic exclusivity checks (a quarter of the
/// encoding time when measured): every access to them is a single method's append or update
/// on the one thread that encodes, and none of them calls out to user code while it holds
/// the access, so two accesses never overlap.
final class JSONEncodingState {
    /// One open value: what it has become, and how many members it has.
    struct Frame {
        /// Nothing yet; an object; an array; a single value to come; a single value written.
        enum Kind { case empty, object, array, single, written }
        var kind: Kind
        var count = 0
        /// The key or index this value is under in its parent, for the coding path.
        var key: (any CodingKey)?
        /// Tells a frame from an earlier one at the same depth.
        let id: Int
        /// Whether member names are converted by the key strategy (not a dictionary's keys).
        var convertsKeys: Bool
    }

    /// Where a container written out of order goes: after `offset` bytes of this state.
    struct Deferred {
        let offset: Int
        let state: JSONEncodingState
    }

    @exclusivity(unchecked) var bytes: JSONOutputBuffer
    @exclusivity(unchecked) var frames: [Frame] = []
    var deferred: [Deferred] = []
    /// A misuse found where no error can be thrown (asking for a container), thrown at the end.
    var failure: (any Error)?
    let options: DirectJSONEncoder.Options
    /// The coding path above this state's first frame.
    let basePath: [any CodingKey]
    @exclusivity(unchecked) private var nextID = 0

    init(options: DirectJSONEncoder.Options, basePath: [any CodingKey] = []) {
        self.options = options
        // Room for a small model value's text without growing.
        self.bytes = JSONOutputBuffer(capacity: basePath.isEmpty ? 512 : 64)
        self.basePath = basePath
        frames.reserveCapacity(8)
    }

    /// Empties the state for another encode with the same options, unless its buffer grew
    /// past `limit` bytes; returns whether it did (a ``JSONEncodingStateSlot`` keeps it then).
    func resetForReuse(keepingCapacity limit: Int) -> Bool {
        guard basePath.isEmpty, bytes.capacity <= limit else { return false }
        bytes.removeAll()
        // Each only when needed: after a finished encode there is nothing to free.
        if !frames.isEmpty { frames.removeAll(keepingCapacity: true) }
        if !deferred.isEmpty { deferred.removeAll() }
        if failure != nil { failure = nil }
        nextID = 0
        return true
    }

    // MARK: Frames

    /// The id of the first frame: a deferred container's own.
    var rootID: Int { frames.first?.id ?? 0 }

    /// Opens the frame of a value about to be written under `key`.
    func push(key: (any CodingKey)?) -> Int {
        nextID &+= 1
        frames.append(Frame(kind: .empty, key: key, id: nextID, convertsKeys: options.convertsKeys))
        return nextID
    }

    /// Closes the innermost frame: a container's closing bracket, or `{}` for a value that
    /// encoded nothing (as Foundation writes it).
    func pop() {
        guard let frame = frames.popLast() else { return }
        switch frame.kind {
        case .empty, .single: bytes.append(UInt8(ascii: "{"), UInt8(ascii: "}"))
        case .object: bytes.append(UInt8(ascii: "}"))
        case .array: bytes.append(UInt8(ascii: "]"))
        case .written: break
        }
    }

    /// The coding path at `depth` frames.
    func codingPath(depth: Int) -> [any CodingKey] {
        var path = basePath
        for frame in frames.prefix(depth) { if let key = frame.key { path.append(key) } }
        return path
    }

    /// Checks that a container of frame `id` at `depth` is the innermost open one.
    func checkCurrent(depth: Int, id: Int) throws {
        guard depth == frames.count, depth > 0, frames[depth - 1].id == id else {
            throw EncodingError.invalidValue(
                "container",
                .init(
                    codingPath: codingPath(depth: min(depth, frames.count)),
                    debugDescription: "A container was written to after a value nested in its parent began."))
        }
    }

    /// Makes the innermost frame `kind` (writing its opening bracket) if it is still empty.
    /// Asking again for the same kind of container is allowed (a subclass's `encode(to:)`
    /// calling its superclass's).
    func open(_ kind: Frame.Kind, depth: Int, id: Int) throws {
        try checkCurrent(depth: depth, id: id)
        switch (frames[depth - 1].kind, kind) {
        case (.empty, .object): bytes.append(UInt8(ascii: "{"))
        case (.empty, .array): bytes.append(UInt8(ascii: "["))
        case (.empty, .single): break
        case (.object, .object), (.array, .array), (.single, .single), (.written, .single): return
        default:
            throw EncodingError.invalidValue(
                "container",
                .init(
                    codingPath: codingPath(depth: depth),
                    debugDescription: "A value asked for a container of another kind than the one it has."))
        }
        frames[depth - 1].kind = kind
    }

    /// Starts the one value of a single-value container; a second one is an error.
    func beginSingle(depth: Int, id: Int) throws {
        try checkCurrent(depth: depth, id: id)
        guard frames[depth - 1].kind == .single else {
            throw EncodingError.invalidValue(
                "value",
                .init(
                    codingPath: codingPath(depth: depth),
                    debugDescription: "A single-value container was asked to encode a second value."))
        }
        frames[depth - 1].kind = .written
    }

    /// Starts the next member of the innermost frame: a comma after the first.
    func beginElement(depth: Int, id: Int) throws {
        try checkCurrent(depth: depth, id: id)
        if frames[depth - 1].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[depth - 1].count += 1
    }

    /// Starts member `key` of the innermost object: a comma after the first, then `"name":`.
    func beginMember(_ key: some CodingKey, depth: Int, id: Int) throws {
        try beginElement(depth: depth, id: id)
        if frames[depth - 1].convertsKeys {
            bytes.appendJSONString(
                JSONKeyConversion.encodedName(of: key, path: codingPath(depth: depth), options.key),
                escapesSlashes: options.escapesSlashes)
        } else {
            bytes.appendJSONString(key.stringValue, escapesSlashes: options.escapesSlashes)
        }
        bytes.append(UInt8(ascii: ":"))
    }

    // MARK: Deferred containers

    /// A state for a container that may be written after its parent goes on, placed here.
    func deferredState(key: any CodingKey, depth: Int, kind: Frame.Kind) -> JSONEncodingState {
        let child = JSONEncodingState(options: options, basePath: codingPath(depth: depth) + [key])
        _ = child.push(key: nil)
        child.frames[0].kind = kind
        switch kind {
        case .object: child.bytes.append(UInt8(ascii: "{"))
        case .array: child.bytes.append(UInt8(ascii: "["))
        case .empty, .single, .written: break
        }
        deferred.append(Deferred(offset: bytes.count, state: child))
        return child
    }

    /// Appends the finished text to `output`: open frames closed, deferred containers spliced
    /// in where they were created.
    ///
    /// - Throws: The first misuse recorded in ``failure``, here or in a deferred container
    ///   (`output` may then hold part of the text: the caller drops it).
    func finish(into output: inout [UInt8]) throws {
        if let failure { throw failure }
        while !frames.isEmpty { pop() }
        var copied = 0
        for piece in deferred {
            bytes.copy(copied..<piece.offset, to: &output)
            try piece.state.finish(into: &output)
            copied = piece.offset
        }
        bytes.copy(copied..<bytes.count, to: &output)
    }

    // MARK: Values

    /// Writes `value` under `key` in the innermost frame (or at the top).
    func encode<T: Encodable>(_ value: T, key: (any CodingKey)?) throws {
        if try encodeSpecial(value, key: key) { return }
        let id = push(key: key)
        if options.convertsKeys, T.self is any JSONStringKeyedDictionary.Type {
            frames[frames.count - 1].convertsKeys = false
        }
        try value.encode(to: JSONValueEncoder(state: self, depth: frames.count, id: id))
        if key == nil, frames.count == 1, basePath.isEmpty, frames[0].kind == .empty || frames[0].kind == .single {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        pop()
    }
}
