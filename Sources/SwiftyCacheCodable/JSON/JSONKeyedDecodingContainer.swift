/// The members of a JSON object being read.
struct JSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: JSONDecodingState
    let object: Int
    let convertsKeys: Bool

    var codingPath: [any CodingKey] { state.codingPath(of: object) }

    var allKeys: [Key] {
        state.members(of: object, convertsKeys: convertsKeys && state.options.convertsKeys).compactMap {
            Key(stringValue: $0.name)
        }
    }

    func contains(_ key: Key) -> Bool { lookUp(key) != nil }

    private func lookUp(_ key: Key) -> Int? { state.member(key, in: object, convertsKeys: convertsKeys) }

    /// The value token of `key`, which must be there.
    private func value(_ key: Key) throws -> Int {
        guard let index = lookUp(key) else {
            throw DecodingError.keyNotFound(
                key,
                .init(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return index
    }

    /// The value token of `key` unless it is absent or `null`.
    private func presentValue(_ key: Key) -> Int? {
        guard let index = lookUp(key), state.tokens[index].kind != .null else { return nil }
        return index
    }

    func decodeNil(forKey key: Key) throws -> Bool { state.tokens[try value(key)].kind == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try state.bool(at: value(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try state.string(at: value(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try state.float(type, at: value(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try state.float(type, at: value(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try state.integer(type, at: value(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try state.integer(type, at: value(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try state.integer(type, at: value(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try state.integer(type, at: value(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try state.integer(type, at: value(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try state.integer(type, at: value(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try state.integer(type, at: value(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try state.integer(type, at: value(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try state.integer(type, at: value(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try state.integer(type, at: value(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try state.decode(type, at: value(key)) }

    // One lookup each, where the defaults make three (`contains`, `decodeNil`, `decode`).
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try presentValue(key).map { try state.bool(at: $0) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try presentValue(key).map { try state.string(at: $0) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try presentValue(key).map { try state.float(type, at: $0) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try presentValue(key).map { try state.float(type, at: $0) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try integerIfPresent(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try presentValue(key).map { try state.decode(type, at: $0) }
    }

    private func integerIfPresent<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T? {
        try presentValue(key).map { try state.integer(type, at: $0) }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONValueDecoder(state: state, index: value(key), convertsKeys: true).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoder(state: state, index: value(key), convertsKeys: true).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(named: JSONKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(named: key)
    }

    /// A decoder of member `key`; of `null` when it is absent, as Foundation does.
    private func superDecoder(named key: some CodingKey) throws -> any Decoder {
        let index = state.member(key, in: object, convertsKeys: convertsKeys) ?? state.nullToken()
        return JSONValueDecoder(state: state, index: index, convertsKeys: true)
    }
}
