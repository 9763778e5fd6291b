/// The elements of a JSON array being written.
struct JSONUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let state: JSONEncodingState
    let depth: Int
    let id: Int

    var codingPath: [any CodingKey] { state.codingPath(depth: depth) }

    var count: Int {
        guard depth > 0, depth <= state.frames.count, state.frames[depth - 1].id == id else { return 0 }
        return state.frames[depth - 1].count
    }

    private func element() throws { try state.beginElement(depth: depth, id: id) }

    mutating func encodeNil() throws {
        try element()
        state.bytes.appendJSONNull()
    }

    mutating func encode(_ value: Bool) throws {
        try element()
        state.bytes.appendJSONBool(value)
    }

    mutating func encode(_ value: String) throws {
        try element()
        state.bytes.appendJSONString(value, escapesSlashes: state.options.escapesSlashes)
    }

    mutating func encode(_ value: Double) throws {
        try element()
        try state.writeFloat(value, key: JSONKey(index: count - 1))
    }

    mutating func encode(_ value: Float) throws {
        try element()
        try state.writeFloat(value, key: JSONKey(index: count - 1))
    }

    mutating func encode(_ value: Int) throws {
        // Concrete, as in the keyed container.
        try element()
        state.bytes.appendJSONInteger(value)
    }
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }

    private func encodeInteger<T: SignedInteger & FixedWidthInteger>(_ value: T) throws {
        try element()
        state.bytes.appendJSONInteger(value)
    }

    private func encodeInteger<T: UnsignedInteger & FixedWidthInteger>(_ value: T) throws {
        try element()
        state.bytes.appendJSONInteger(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try element()
        try state.encode(value, key: JSONKey(index: count - 1))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let key = JSONKey(index: count)
        state.record { try element() }
        let child = state.deferredState(key: key, depth: depth, kind: .object)
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(state: child, depth: 1, id: child.rootID))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = JSONKey(index: count)
        state.record { try element() }
        let child = state.deferredState(key: key, depth: depth, kind: .array)
        return JSONUnkeyedEncodingContainer(state: child, depth: 1, id: child.rootID)
    }

    mutating func superEncoder() -> any Encoder {
        let key = JSONKey(index: count)
        state.record { try element() }
        let child = state.deferredState(key: key, depth: depth, kind: .empty)
        return JSONValueEncoder(state: child, depth: 1, id: child.rootID)
    }
}
