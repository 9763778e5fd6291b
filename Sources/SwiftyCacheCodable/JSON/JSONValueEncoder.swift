/// The `Encoder` a value's `encode(to:)` receives: a position in a ``JSONEncodingState``.
struct JSONValueEncoder: Encoder {
    let state: JSONEncodingState
    let depth: Int
    let id: Int

    var codingPath: [any CodingKey] { state.codingPath(depth: depth) }

    var userInfo: [CodingUserInfoKey: Any] { state.options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        state.record { try state.open(.object, depth: depth, id: id) }
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<Key>(state: state, depth: depth, id: id))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        state.record { try state.open(.array, depth: depth, id: id) }
        return JSONUnkeyedEncodingContainer(state: state, depth: depth, id: id)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        state.record { try state.open(.single, depth: depth, id: id) }
        return JSONSingleValueEncodingContainer(state: state, depth: depth, id: id)
    }
}

extension JSONEncodingState {
    /// Runs `body`, keeping its error (the first one) for the end of the encoding: for the
    /// calls of `Encoder` that cannot throw.
    func record(_ body: () throws -> Void) {
        do { try body() } catch { failure = failure ?? error }
    }
}
