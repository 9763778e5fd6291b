/// The elements of a JSON array being read, in order.
struct JSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let state: JSONDecodingState
    let array: Int
    /// The token of the element at ``currentIndex``.
    private var current: Int

    init(state: JSONDecodingState, array: Int) {
        self.state = state
        self.array = array
        self.current = array + 1
    }

    var codingPath: [any CodingKey] { state.codingPath(of: array) }
    var count: Int? { Int(state.tokens[array].end) }
    var isAtEnd: Bool { current >= Int(state.tokens[array].next) }
    private(set) var currentIndex = 0

    /// The next element's token, which must be there; the container moves past it.
    private mutating func next(_ type: Any.Type) throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                .init(
                    codingPath: codingPath + [JSONKey(index: currentIndex)],
                    debugDescription: "Unkeyed container is at end."))
        }
        let index = current
        current = Int(state.tokens[index].next)
        currentIndex += 1
        return index
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, state.tokens[current].kind == .null else {
            if isAtEnd { _ = try next(Never.self) }
            return false
        }
        _ = try next(Never.self)
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try state.bool(at: next(type)) }
    mutating func decode(_ type: String.Type) throws -> String { try state.string(at: next(type)) }
    mutating func decode(_ type: Double.Type) throws -> Double { try state.float(type, at: next(type)) }
    mutating func decode(_ type: Float.Type) throws -> Float { try state.float(type, at: next(type)) }
    mutating func decode(_ type: Int.Type) throws -> Int { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(type, at: next(type)) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(type, at: next(type)) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try state.decode(type, at: next(type)) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONValueDecoder(state: state, index: next(type), convertsKeys: true).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoder(state: state, index: next([Any].self), convertsKeys: true).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        JSONValueDecoder(state: state, index: try next(Any.self), convertsKeys: true)
    }
}
