-- Weft checkpoint store, schema 8: values may be packed with zstd (a
-- packDeflate byte, then 0xff, then a zstd frame; see record.Pack). No
-- table changes: the number tells a build that reads only DEFLATE that the
-- file is newer than it, so it opens it read-only and says why, rather
-- than calling the new values damaged.
SELECT 1;
