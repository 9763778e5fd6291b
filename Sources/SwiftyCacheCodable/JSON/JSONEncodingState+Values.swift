#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The values written without asking them to encode themselves: the common leaves, for speed,
/// and what Foundation writes its own way (dates, data, URLs, decimals), for compatibility.
extension JSONEncodingState {
    /// Writes `value` directly when its type is one of those; returns whether it did.
    func encodeSpecial<T: Encodable>(_ value: T, key: (any CodingKey)?) throws -> Bool {
        if T.self == String.self {
            bytes.appendJSONString(reinterpret(value, as: String.self), escapesSlashes: options.escapesSlashes)
        } else if T.self == Int.self {
            bytes.appendJSONInteger(reinterpret(value, as: Int.self))
        } else if T.self == Double.self {
            try writeFloat(reinterpret(value, as: Double.self), key: key)
        } else if T.self == Bool.self {
            bytes.appendJSONBool(reinterpret(value, as: Bool.self))
        } else if T.self == [String].self {
            bytes.append(UInt8(ascii: "["))
            for (index, element) in reinterpret(value, as: [String].self).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.appendJSONString(element, escapesSlashes: options.escapesSlashes)
            }
            bytes.append(UInt8(ascii: "]"))
        } else if T.self == [Int].self {
            bytes.append(UInt8(ascii: "["))
            for (index, element) in reinterpret(value, as: [Int].self).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.appendJSONInteger(element)
            }
            bytes.append(UInt8(ascii: "]"))
        } else {
            return try encodeFoundationValue(value, key: key)
        }
        return true
    }

    /// Dates, data, URLs and decimals, written as Foundation's `JSONEncoder` writes them.
    private func encodeFoundationValue<T: Encodable>(_ value: T, key: (any CodingKey)?) throws -> Bool {
        if T.self == Date.self {
            try encodeDate(reinterpret(value, as: Date.self), key: key)
        } else if T.self == Data.self {
            try encodeData(reinterpret(value, as: Data.self), key: key)
        } else if T.self == URL.self {
            bytes.appendJSONString(
                reinterpret(value, as: URL.self).absoluteString, escapesSlashes: options.escapesSlashes)
        } else if T.self == Decimal.self {
            let decimal = reinterpret(value, as: Decimal.self)
            guard !decimal.isNaN else { throw invalidFloat(decimal, key: key) }
            bytes.appendUTF8(of: decimal.description)
        } else {
            return false
        }
        return true
    }

    /// Writes a `Double` or `Float`; infinities and NaN as the non-conforming strategy says.
    func writeFloat<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F, key: (any CodingKey)?) throws {
        if value.isFinite {
            // An integral `Double` below 2⁵³ in magnitude is spelled as its integer's digits
            // (`description` less its ".0"): written without the search for the shortest
            // digits (a `Date` of whole seconds, a count kept as a `Double`). −0 keeps its sign.
            if F.self == Double.self, value.magnitude < 0x1p53, value == value.rounded(.towardZero),
                value != 0 || value.sign == .plus
            {
                bytes.appendJSONInteger(Int(value))
                return
            }
            bytes.appendJSONNumber(value.description)
            return
        }
        guard case .convertToString(let positive, let negative, let nan) = options.nonConformingFloat else {
            throw invalidFloat(value, key: key)
        }
        let text = value.isNaN ? nan : value > 0 ? positive : negative
        bytes.appendJSONString(text, escapesSlashes: options.escapesSlashes)
    }

    private func invalidFloat(_ value: some Any, key: (any CodingKey)?) -> EncodingError {
        var path = codingPath(depth: frames.count)
        if let key { path.append(key) }
        return EncodingError.invalidValue(
            value,
            .init(
                codingPath: path,
                debugDescription:
                    "Unable to encode \(value) directly in JSON. Use a non-conforming float strategy to encode it."))
    }

    private func encodeDate(_ date: Date, key: (any CodingKey)?) throws {
        switch options.date {
        case .deferredToDate:
            try writeFloat(date.timeIntervalSinceReferenceDate, key: key)
        case .secondsSince1970:
            try writeFloat(date.timeIntervalSince1970, key: key)
        case .millisecondsSince1970:
            try writeFloat(1000 * date.timeIntervalSince1970, key: key)
        case .iso8601:
            bytes.appendJSONString(date.formatted(.iso8601), escapesSlashes: options.escapesSlashes)
        case .custom(let write):
            try encodeCustom(key: key) { try write(date, $0) }
        // `.formatted(_:)` is a case of its own only where Foundation is not split into
        // FoundationEssentials (Apple platforms); elsewhere it is a `.custom` closure.
        #if !canImport(FoundationEssentials)
        case .formatted(let formatter):
            bytes.appendJSONString(formatter.string(from: date), escapesSlashes: options.escapesSlashes)
        #endif
        @unknown default:
            throw EncodingError.invalidValue(
                date, .init(codingPath: codingPath(depth: frames.count), debugDescription: "Unknown date strategy."))
        }
    }

    private func encodeData(_ data: Data, key: (any CodingKey)?) throws {
        switch options.data {
        case .base64:
            bytes.appendJSONString(data.base64EncodedString(), escapesSlashes: options.escapesSlashes)
        case .deferredToData:
            try encodeCustom(key: key) { try data.encode(to: $0) }
        case .custom(let write):
            try encodeCustom(key: key) { try write(data, $0) }
        @unknown default:
            throw EncodingError.invalidValue(
                data, .init(codingPath: codingPath(depth: frames.count), debugDescription: "Unknown data strategy."))
        }
    }

    /// Runs a custom strategy's closure with an encoder at this position; `{}` if it wrote
    /// nothing, as Foundation does.
    private func encodeCustom(key: (any CodingKey)?, _ write: (any Encoder) throws -> Void) throws {
        let id = push(key: key)
        try write(JSONValueEncoder(state: self, depth: frames.count, id: id))
        pop()
    }
}

/// `value` as the type it is known to have (the caller compared the metatypes): a copy without
/// a dynamic cast.
@inline(__always)
@inlinable
func reinterpret<T, U>(_ value: T, as type: U.Type) -> U {
    withUnsafePointer(to: value) { $0.withMemoryRebound(to: U.self, capacity: 1) { $0.pointee } }
}
