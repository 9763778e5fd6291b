/// The `Decoder` a type's `init(from:)` receives: a token of a ``JSONDecodingState``.
struct JSONValueDecoder: Decoder {
    let state: JSONDecodingState
    let index: Int
    /// Whether member names go through the key strategy (not for a `[String: …]`'s keys).
    let convertsKeys: Bool

    var codingPath: [any CodingKey] { state.codingPath(of: index) }

    var userInfo: [CodingUserInfoKey: Any] { state.options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard state.tokens[index].kind == .object else { throw state.mismatch([String: Any].self, at: index) }
        return KeyedDecodingContainer(
            JSONKeyedDecodingContainer<Key>(state: state, object: index, convertsKeys: convertsKeys))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard state.tokens[index].kind == .array else { throw state.mismatch([Any].self, at: index) }
        return JSONUnkeyedDecodingContainer(state: state, array: index)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        JSONSingleValueDecodingContainer(state: state, index: index)
    }
}
