#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Rewrites compact JSON the encoder wrote with its members sorted by key (`.sortedKeys`) or
/// indented (`.prettyPrinted`), from its tape: the encoder itself stays one pass in the order
/// values encode themselves.
enum JSONReformatter {
    /// Reformats the JSON text in `bytes` from offset `start` on.
    static func reformat(_ bytes: inout [UInt8], from start: Int, options: JSONEncoder.OutputFormatting) throws {
        let text = Array(bytes[start...])
        // The encoder's own output: no depth limit but the one its values had.
        let tokens = try text.withUnsafeBufferPointer { try JSONScanner.scan($0, maxDepth: Int.max) }
        bytes.removeSubrange(start...)
        let writer = Writer(
            text: text, tokens: tokens, sorts: options.contains(.sortedKeys),
            indents: options.contains(.prettyPrinted))
        writer.write(0, depth: 0, into: &bytes)
    }

    private struct Writer {
        let text: [UInt8]
        let tokens: [JSONToken]
        let sorts: Bool
        let indents: Bool

        func write(_ index: Int, depth: Int, into output: inout [UInt8]) {
            let token = tokens[index]
            switch token.kind {
            case .object, .array:
                writeContainer(index, depth: depth, into: &output)
            case .string:
                output.append(UInt8(ascii: "\""))
                output.append(contentsOf: text[Int(token.start)..<Int(token.end)])
                output.append(UInt8(ascii: "\""))
            case .number, .trueLiteral, .falseLiteral, .null:
                output.append(contentsOf: text[Int(token.start)..<Int(token.end)])
            }
        }

        private func writeContainer(_ index: Int, depth: Int, into output: inout [UInt8]) {
            let isObject = tokens[index].kind == .object
            var children: [Int] = []
            var child = index + 1
            while child < Int(tokens[index].next) {
                children.append(child)
                child = Int(tokens[isObject ? child + 1 : child].next)
            }
            if isObject && sorts {
                children.sort { keyBytes($0).lexicographicallyPrecedes(keyBytes($1)) }
            }
            output.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
            for (position, child) in children.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth + 1, into: &output)
                if isObject {
                    write(child, depth: depth + 1, into: &output)
                    output.append(contentsOf: indents ? Array(" : ".utf8) : [UInt8(ascii: ":")])
                    write(child + 1, depth: depth + 1, into: &output)
                } else {
                    write(child, depth: depth + 1, into: &output)
                }
            }
            if !children.isEmpty { newline(depth, into: &output) }
            output.append(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }

        private func keyBytes(_ index: Int) -> ArraySlice<UInt8> {
            text[Int(tokens[index].start)..<Int(tokens[index].end)]
        }

        private func newline(_ depth: Int, into output: inout [UInt8]) {
            guard indents else { return }
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
        }
    }
}
