#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Dates, data, URLs and decimals, read as Foundation's `JSONDecoder` reads them.
extension JSONDecodingState {
    /// The Foundation types read their own way.
    enum FoundationLeaf {
        case date, data, url, decimal

        /// The leaf `type` is, or `nil` for any other type.
        init?(_ type: Any.Type) {
            if type == Date.self {
                self = .date
            } else if type == Data.self {
                self = .data
            } else if type == URL.self {
                self = .url
            } else if type == Decimal.self {
                self = .decimal
            } else {
                return nil
            }
        }
    }

    /// The value of `leaf`'s type `T` at token `index`.
    ///
    /// The caller classifies `T` first, so that no `T?` is formed: in code that runs
    /// unspecialized, an optional of a generic type is a metadata lookup at every call.
    func decodeFoundationValue<T: Decodable>(_ leaf: FoundationLeaf, as type: T.Type, at index: Int) throws -> T {
        switch leaf {
        case .date:
            return reinterpret(try date(at: index), as: T.self)
        case .data:
            return reinterpret(try data(at: index), as: T.self)
        case .url:
            let text = try string(at: index)
            guard let url = URL(string: text) else { throw corrupted(at: index, "Invalid URL string.") }
            return reinterpret(url, as: T.self)
        case .decimal:
            let text = try numberText(at: index, for: Decimal.self)
            guard let decimal = Decimal(string: text) else {
                throw corrupted(at: index, "Parsed JSON number <\(text)> does not fit in Decimal.")
            }
            return reinterpret(decimal, as: T.self)
        }
    }

    private func date(at index: Int) throws -> Date {
        switch options.date {
        case .deferredToDate:
            return Date(timeIntervalSinceReferenceDate: try float(Double.self, at: index))
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try float(Double.self, at: index))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try float(Double.self, at: index) / 1000)
        case .iso8601:
            let text = try string(at: index)
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw corrupted(at: index, "Expected date string to be ISO8601-formatted.")
            }
            return date
        case .custom(let read):
            return try read(JSONValueDecoder(state: self, index: index, convertsKeys: true))
        // `.formatted(_:)` is a case of its own only where Foundation is not split into
        // FoundationEssentials (Apple platforms); elsewhere it is a `.custom` closure.
        #if !canImport(FoundationEssentials)
        case .formatted(let formatter):
            let text = try string(at: index)
            guard let date = formatter.date(from: text) else {
                throw corrupted(at: index, "Date string does not match format expected by formatter.")
            }
            return date
        #endif
        @unknown default:
            throw corrupted(at: index, "Unknown date strategy.")
        }
    }

    private func data(at index: Int) throws -> Data {
        switch options.data {
        case .base64:
            guard let data = Data(base64Encoded: try string(at: index)) else {
                throw corrupted(at: index, "Encountered Data is not valid Base64.")
            }
            return data
        case .deferredToData:
            return try Data(from: JSONValueDecoder(state: self, index: index, convertsKeys: true))
        case .custom(let read):
            return try read(JSONValueDecoder(state: self, index: index, convertsKeys: true))
        @unknown default:
            throw corrupted(at: index, "Unknown data strategy.")
        }
    }
}
