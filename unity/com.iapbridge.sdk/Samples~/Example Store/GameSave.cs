// The example game's own save: what the player owns and which purchase keys
// it has already granted. Plain C# (no Unity API), so the Mono test runs it.
//
// This is the game's half of exactly-once: a key found here was granted
// before (a crash between saving and confirming delivers it again) and is
// not granted twice. The file is replaced atomically, so a crash while
// saving leaves the old save or the new one, never half of one.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;

namespace IAPBridge.Example
{
    public sealed class GameSave
    {
        public long Coins;
        public bool RemoveAds;
        /// The premium unlock of players who bought the game while it was paid.
        public bool Premium;
        private readonly HashSet<long> granted = new HashSet<long>();
        private readonly string path;

        private GameSave(string path) { this.path = path; }

        public static GameSave Load(string path)
        {
            var s = new GameSave(path);
            if (!File.Exists(path)) return s;
            foreach (string line in File.ReadAllLines(path))
            {
                string[] f = line.Split(' ');
                if (f.Length != 2) continue;
                long v;
                if (!long.TryParse(f[1], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out v)) continue;
                if (f[0] == "coins") s.Coins = v;
                else if (f[0] == "removeAds") s.RemoveAds = v != 0;
                else if (f[0] == "premium") s.Premium = v != 0;
                else if (f[0] == "granted") s.granted.Add(v);
            }
            return s;
        }

        public bool WasGranted(long key) { return granted.Contains(key); }
        public void MarkGranted(long key) { granted.Add(key); }

        /// Writes a new file, forces it to disk, then renames it over the old one.
        public void Save()
        {
            string tmp = path + ".tmp";
            using (var f = new FileStream(tmp, FileMode.Create, FileAccess.Write))
            using (var w = new StreamWriter(f))
            {
                w.WriteLine("coins " + Coins.ToString(CultureInfo.InvariantCulture));
                w.WriteLine("removeAds " + (RemoveAds ? 1 : 0));
                w.WriteLine("premium " + (Premium ? 1 : 0));
                foreach (long k in granted) w.WriteLine("granted " + k.ToString(CultureInfo.InvariantCulture));
                w.Flush();
                f.Flush(true);
            }
            if (File.Exists(path)) File.Replace(tmp, path, null);
            else File.Move(tmp, path);
        }
    }
}
