/// The one value of a single-value container being written.
struct JSONSingleValueEncodingContainer: SingleValueEncodingContainer {
    let state: JSONEncodingState
    let depth: Int
    let id: Int

    var codingPath: [any CodingKey] { state.codingPath(depth: depth) }

    private func begin() throws { try state.beginSingle(depth: depth, id: id) }

    mutating func encodeNil() throws {
        try begin()
        state.bytes.appendJSONNull()
    }

    mutating func encode(_ value: Bool) throws {
        try begin()
        state.bytes.appendJSONBool(value)
    }

    mutating func encode(_ value: String) throws {
        try begin()
        state.bytes.appendJSONString(value, escapesSlashes: state.options.escapesSlashes)
    }

    mutating func encode(_ value: Double) throws {
        try begin()
        try state.writeFloat(value, key: nil)
    }

    mutating func encode(_ value: Float) throws {
        try begin()
        try state.writeFloat(value, key: nil)
    }

    mutating func encode(_ value: Int) throws {
        // Concrete, as in the keyed container.
        try begin()
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
        try begin()
        state.bytes.appendJSONInteger(value)
    }

    private func encodeInteger<T: UnsignedInteger & FixedWidthInteger>(_ value: T) throws {
        try begin()
        state.bytes.appendJSONInteger(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try begin()
        try state.encode(value, key: nil)
    }
}
