/// The members of a JSON object being written.
struct JSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: JSONEncodingState
    let depth: Int
    let id: Int

    var codingPath: [any CodingKey] { state.codingPath(depth: depth) }

    private func member(_ key: Key) throws { try state.beginMember(key, depth: depth, id: id) }

    mutating func encodeNil(forKey key: Key) throws {
        try member(key)
        state.bytes.appendJSONNull()
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try member(key)
        state.bytes.appendJSONBool(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try member(key)
        state.bytes.appendJSONString(value, escapesSlashes: state.options.escapesSlashes)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try member(key)
        try state.writeFloat(value, key: key)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try member(key)
        try state.writeFloat(value, key: key)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        // Not through the generic `encodeInteger`, which the optimizer merges with the other
        // widths into one function that takes the type as a parameter.
        try member(key)
        state.bytes.appendJSONInteger(value)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeInteger(value, key) }

    private func encodeInteger<T: SignedInteger & FixedWidthInteger>(_ value: T, _ key: Key) throws {
        try member(key)
        state.bytes.appendJSONInteger(value)
    }

    private func encodeInteger<T: UnsignedInteger & FixedWidthInteger>(_ value: T, _ key: Key) throws {
        try member(key)
        state.bytes.appendJSONInteger(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try member(key)
        try state.encode(value, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        state.record { try member(key) }
        let child = state.deferredState(key: key, depth: depth, kind: .object)
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(state: child, depth: 1, id: child.rootID))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        state.record { try member(key) }
        let child = state.deferredState(key: key, depth: depth, kind: .array)
        return JSONUnkeyedEncodingContainer(state: child, depth: 1, id: child.rootID)
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: JSONKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key)
    }

    private func superEncoder(named key: some CodingKey) -> any Encoder {
        state.record { try state.beginMember(key, depth: depth, id: id) }
        let child = state.deferredState(key: key, depth: depth, kind: .empty)
        return JSONValueEncoder(state: child, depth: 1, id: child.rootID)
    }
}
