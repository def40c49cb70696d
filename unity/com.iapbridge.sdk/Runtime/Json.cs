// A small JSON reader and string quoting, enough for the SDK's messages.
//
// JsonUtility exists only inside Unity, and the binding must parse the same
// way in the editor, on a device and under plain Mono, so it brings its own
// reader (no Newtonsoft, no System.Text.Json). Objects become
// Dictionary<string, object>, arrays List<object>, numbers long (or double
// when they have a fraction or exponent), plus string, bool and null.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace IAPBridge
{
    public static class Json
    {
        private const int MaxDepth = 64;

        /// Parses one JSON value; throws FormatException on malformed input.
        public static object Parse(string text)
        {
            if (text == null) throw new FormatException("JSON text is null");
            var r = new Reader(text);
            r.SkipSpace();
            object v = r.Value(0);
            r.SkipSpace();
            if (r.Pos != text.Length) throw r.Error("unexpected text after the value");
            return v;
        }

        /// `s` as a JSON string literal, quotes included ("null" for null).
        public static string Quote(string s)
        {
            if (s == null) return "null";
            var b = new StringBuilder(s.Length + 2);
            b.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': b.Append("\\\""); break;
                    case '\\': b.Append("\\\\"); break;
                    case '\n': b.Append("\\n"); break;
                    case '\r': b.Append("\\r"); break;
                    case '\t': b.Append("\\t"); break;
                    default:
                        if (c < 0x20) b.Append("\\u").Append(((int)c).ToString("x4"));
                        else b.Append(c);
                        break;
                }
            }
            return b.Append('"').ToString();
        }

        private sealed class Reader
        {
            private readonly string s;
            internal int Pos;

            internal Reader(string text) { s = text; }

            internal FormatException Error(string what)
            {
                return new FormatException("JSON: " + what + " at offset " + Pos);
            }

            internal void SkipSpace()
            {
                while (Pos < s.Length && (s[Pos] == ' ' || s[Pos] == '\t' || s[Pos] == '\n' || s[Pos] == '\r')) Pos++;
            }

            internal object Value(int depth)
            {
                if (depth > MaxDepth) throw Error("nested too deeply");
                if (Pos >= s.Length) throw Error("unexpected end");
                char c = s[Pos];
                switch (c)
                {
                    case '{': return Obj(depth);
                    case '[': return Arr(depth);
                    case '"': return Str();
                    case 't': Word("true"); return true;
                    case 'f': Word("false"); return false;
                    case 'n': Word("null"); return null;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) return Number();
                        throw Error("unexpected character '" + c + "'");
                }
            }

            private void Word(string w)
            {
                if (string.CompareOrdinal(s, Pos, w, 0, w.Length) != 0) throw Error("expected " + w);
                Pos += w.Length;
            }

            private Dictionary<string, object> Obj(int depth)
            {
                var d = new Dictionary<string, object>();
                Pos++;
                SkipSpace();
                if (Pos < s.Length && s[Pos] == '}') { Pos++; return d; }
                while (true)
                {
                    SkipSpace();
                    if (Pos >= s.Length || s[Pos] != '"') throw Error("expected a key");
                    string k = Str();
                    SkipSpace();
                    if (Pos >= s.Length || s[Pos] != ':') throw Error("expected ':'");
                    Pos++;
                    SkipSpace();
                    d[k] = Value(depth + 1);
                    SkipSpace();
                    if (Pos >= s.Length) throw Error("unexpected end in object");
                    if (s[Pos] == ',') { Pos++; continue; }
                    if (s[Pos] == '}') { Pos++; return d; }
                    throw Error("expected ',' or '}'");
                }
            }

            private List<object> Arr(int depth)
            {
                var l = new List<object>();
                Pos++;
                SkipSpace();
                if (Pos < s.Length && s[Pos] == ']') { Pos++; return l; }
                while (true)
                {
                    SkipSpace();
                    l.Add(Value(depth + 1));
                    SkipSpace();
                    if (Pos >= s.Length) throw Error("unexpected end in array");
                    if (s[Pos] == ',') { Pos++; continue; }
                    if (s[Pos] == ']') { Pos++; return l; }
                    throw Error("expected ',' or ']'");
                }
            }

            private string Str()
            {
                Pos++; // opening quote
                var b = new StringBuilder();
                while (true)
                {
                    if (Pos >= s.Length) throw Error("unterminated string");
                    char c = s[Pos++];
                    if (c == '"') return b.ToString();
                    if (c < 0x20) throw Error("control character in string");
                    if (c != '\\') { b.Append(c); continue; }
                    if (Pos >= s.Length) throw Error("unterminated escape");
                    char e = s[Pos++];
                    switch (e)
                    {
                        case '"': b.Append('"'); break;
                        case '\\': b.Append('\\'); break;
                        case '/': b.Append('/'); break;
                        case 'b': b.Append('\b'); break;
                        case 'f': b.Append('\f'); break;
                        case 'n': b.Append('\n'); break;
                        case 'r': b.Append('\r'); break;
                        case 't': b.Append('\t'); break;
                        case 'u':
                            // Surrogate pairs arrive as two \u escapes; UTF-16
                            // strings hold them as two chars, so append each.
                            if (Pos + 4 > s.Length) throw Error("short \\u escape");
                            int code;
                            if (!int.TryParse(s.Substring(Pos, 4), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out code))
                                throw Error("bad \\u escape");
                            b.Append((char)code);
                            Pos += 4;
                            break;
                        default: throw Error("bad escape '\\" + e + "'");
                    }
                }
            }

            private object Number()
            {
                int start = Pos;
                if (s[Pos] == '-') Pos++;
                bool isInteger = true;
                int digits = 0;
                while (Pos < s.Length)
                {
                    char c = s[Pos];
                    if (c >= '0' && c <= '9') { digits++; Pos++; }
                    else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') { isInteger = false; Pos++; }
                    else break;
                }
                if (digits == 0) throw Error("bad number");
                string t = s.Substring(start, Pos - start);
                long l;
                if (isInteger && long.TryParse(t, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out l)) return l;
                double d;
                if (double.TryParse(t, NumberStyles.Float, CultureInfo.InvariantCulture, out d)) return d;
                throw Error("bad number '" + t + "'");
            }
        }
    }

    /// Typed reads from a parsed object; a missing key or a value of another
    /// type gives the default, so a message with extra or missing fields
    /// still parses (the protocol may grow).
    internal struct JsonObject
    {
        private readonly Dictionary<string, object> d;
        internal JsonObject(object o) { d = o as Dictionary<string, object>; }
        internal bool IsObject { get { return d != null; } }

        private object Get(string k)
        {
            object v;
            return d != null && d.TryGetValue(k, out v) ? v : null;
        }

        internal string Str(string k) { return Get(k) as string; }

        internal long Long(string k)
        {
            object v = Get(k);
            if (v is long) return (long)v;
            if (v is double) return (long)(double)v;
            return 0;
        }

        internal int Int(string k) { return (int)Long(k); }

        internal bool Bool(string k)
        {
            object v = Get(k);
            return v is bool && (bool)v;
        }

        internal JsonObject Obj(string k) { return new JsonObject(Get(k)); }

        internal List<object> Arr(string k) { return Get(k) as List<object> ?? new List<object>(); }

        internal string[] Strings(string k)
        {
            var l = new List<string>();
            foreach (object o in Arr(k)) { var s = o as string; if (s != null) l.Add(s); }
            return l.ToArray();
        }
    }
}
