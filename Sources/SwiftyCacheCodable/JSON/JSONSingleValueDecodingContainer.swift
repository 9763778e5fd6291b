/// The one value at a decoder's token.
struct JSONSingleValueDecodingContainer: SingleValueDecodingContainer {
    let state: JSONDecodingState
    let index: Int

    var codingPath: [any CodingKey] { state.codingPath(of: index) }

    func decodeNil() -> Bool { state.tokens[index].kind == .null }

    func decode(_ type: Bool.Type) throws -> Bool { try state.bool(at: index) }
    func decode(_ type: String.Type) throws -> String { try state.string(at: index) }
    func decode(_ type: Double.Type) throws -> Double { try state.float(type, at: index) }
    func decode(_ type: Float.Type) throws -> Float { try state.float(type, at: index) }
    func decode(_ type: Int.Type) throws -> Int { try state.integer(type, at: index) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(type, at: index) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(type, at: index) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(type, at: index) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(type, at: index) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.integer(type, at: index) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(type, at: index) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(type, at: index) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(type, at: index) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(type, at: index) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try state.decode(type, at: index) }
}
