// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the crafted ELF fixtures for the build-ID mmap2 selftests.
 *
 * gcc and ld only produce well-formed files in a few layouts, so the layouts
 * a parser gets wrong (program headers or notes past the first page, a note
 * straddling a page boundary, decoy notes, a second PT_NOTE) and the
 * malformed files it must reject are written here, byte by byte.
 *
 * Every file that must yield a build ID gets a sidecar NAME.id holding the
 * id bytes in hex, as embedded by this program; the tests compare the
 * kernel's bytes against it and never carry expected ids themselves.  Each
 * file gets its own id (derived from its name) so that a kernel reporting
 * the id of a previously mapped file cannot pass.
 *
 * This runs on the build host and writes little-endian x86 files.
 *
 * Usage: gen_fixtures OUTDIR
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096
#define NT_BUILD_ID 3

struct img {
	unsigned char *b;
	size_t len;
};

static void die(const char *what)
{
	fprintf(stderr, "gen_fixtures: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void need(struct img *m, size_t end)
{
	if (end <= m->len)
		return;
	m->b = realloc(m->b, end);
	if (!m->b)
		die("realloc");
	memset(m->b + m->len, 0, end - m->len);
	m->len = end;
}

static void put(struct img *m, uint64_t off, const void *p, size_t n)
{
	need(m, off + n);
	if (n)
		memcpy(m->b + off, p, n);
}

/* Deterministic, distinct per fixture: a stale id from another file fails. */
static void make_id(const char *name, const char *salt, unsigned char *id, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	const char *s;
	size_t i;

	for (s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	for (s = salt; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	for (i = 0; i < n; i++) {
		h ^= h << 13;
		h ^= h >> 7;
		h ^= h << 17;
		id[i] = (unsigned char)(h >> 24);
	}
}

static size_t align4(size_t v)
{
	return (v + 3) & ~(size_t)3;
}

/*
 * One note at @off: header, @name_bytes of @name and @desc_bytes of @desc,
 * each padded to 4 bytes.  namesz/descsz are written as given, so they can
 * lie about the bytes that follow.  Returns the offset after the note.
 */
static uint64_t put_note(struct img *m, uint64_t off, uint32_t namesz,
			 const void *name, size_t name_bytes, uint32_t type,
			 uint32_t descsz, const void *desc, size_t desc_bytes)
{
	Elf64_Nhdr h = { .n_namesz = namesz, .n_descsz = descsz, .n_type = type };

	put(m, off, &h, sizeof(h));
	off += sizeof(h);
	put(m, off, name, name_bytes);
	need(m, off + align4(name_bytes));
	off += align4(name_bytes);
	put(m, off, desc, desc_bytes);
	need(m, off + align4(desc_bytes));
	return off + align4(desc_bytes);
}

static uint64_t put_gnu_note(struct img *m, uint64_t off, uint32_t type,
			     const unsigned char *desc, size_t n)
{
	return put_note(m, off, 4, "GNU", 4, type, n, desc, n);
}

static void put_ehdr(struct img *m, int cls, uint16_t type, uint64_t phoff, uint16_t phnum)
{
	if (cls == ELFCLASS64) {
		Elf64_Ehdr e = { 0 };

		memcpy(e.e_ident, ELFMAG, SELFMAG);
		e.e_ident[EI_CLASS] = ELFCLASS64;
		e.e_ident[EI_DATA] = ELFDATA2LSB;
		e.e_ident[EI_VERSION] = EV_CURRENT;
		e.e_type = type;
		e.e_machine = EM_X86_64;
		e.e_version = EV_CURRENT;
		e.e_entry = 0x400000;
		e.e_phoff = phoff;
		e.e_ehsize = sizeof(e);
		e.e_phentsize = sizeof(Elf64_Phdr);
		e.e_phnum = phnum;
		put(m, 0, &e, sizeof(e));
	} else {
		Elf32_Ehdr e = { 0 };

		memcpy(e.e_ident, ELFMAG, SELFMAG);
		e.e_ident[EI_CLASS] = ELFCLASS32;
		e.e_ident[EI_DATA] = ELFDATA2LSB;
		e.e_ident[EI_VERSION] = EV_CURRENT;
		e.e_type = type;
		e.e_machine = EM_386;
		e.e_version = EV_CURRENT;
		e.e_entry = 0x8048000;
		e.e_phoff = (uint32_t)phoff;
		e.e_ehsize = sizeof(e);
		e.e_phentsize = sizeof(Elf32_Phdr);
		e.e_phnum = phnum;
		put(m, 0, &e, sizeof(e));
	}
}

static size_t phent(int cls)
{
	return cls == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
}

static void put_phdr(struct img *m, int cls, uint64_t phoff, unsigned int idx,
		     uint32_t type, uint64_t off, uint64_t filesz)
{
	uint32_t flags = type == PT_LOAD ? PF_R | PF_X : PF_R;
	uint64_t align = type == PT_LOAD ? PAGE : 4;

	if (cls == ELFCLASS64) {
		Elf64_Phdr p = {
			.p_type = type, .p_flags = flags, .p_offset = off,
			.p_vaddr = 0x400000 + off, .p_paddr = 0x400000 + off,
			.p_filesz = filesz, .p_memsz = filesz, .p_align = align,
		};
		put(m, phoff + idx * sizeof(p), &p, sizeof(p));
	} else {
		Elf32_Phdr p = {
			.p_type = type, .p_flags = flags, .p_offset = (uint32_t)off,
			.p_vaddr = (uint32_t)(0x8048000 + off),
			.p_paddr = (uint32_t)(0x8048000 + off),
			.p_filesz = (uint32_t)filesz, .p_memsz = (uint32_t)filesz,
			.p_align = (uint32_t)align,
		};
		put(m, phoff + idx * sizeof(p), &p, sizeof(p));
	}
}

/*
 * The shape ld produces: ELF header, then [PT_LOAD over the whole file,
 * PT_NOTE over the notes] at @phoff.  Called last, once the file has its
 * final length.
 */
static void finish(struct img *m, int cls, uint16_t type, uint64_t phoff,
		   uint64_t note_off, uint64_t note_len)
{
	need(m, phoff + 2 * phent(cls));
	put_ehdr(m, cls, type, phoff, 2);
	put_phdr(m, cls, phoff, 0, PT_LOAD, 0, m->len);
	put_phdr(m, cls, phoff, 1, PT_NOTE, note_off, note_len);
}

struct ctx {
	const char *name;
	struct img m;
	unsigned char id[20];	/* the build ID this fixture carries */
	size_t id_len;		/* 0: the kernel must fall back */
};

static void gnu_id(struct ctx *c, size_t n)
{
	make_id(c->name, "", c->id, n);
	c->id_len = n;
}

/* A plain, valid file; @mutate then breaks exactly one thing. */
static void valid(struct ctx *c, int cls, uint16_t type)
{
	uint64_t phoff = cls == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, c->id, 20);
	need(&c->m, 0x200);
	finish(&c->m, cls, type, phoff, 0x100, end - 0x100);
}

static Elf64_Phdr *phdr64(struct ctx *c, unsigned int idx)
{
	return (Elf64_Phdr *)(c->m.b + sizeof(Elf64_Ehdr) + idx * sizeof(Elf64_Phdr));
}

static Elf64_Ehdr *ehdr64(struct ctx *c)
{
	return (Elf64_Ehdr *)c->m.b;
}

/* ---- files that must yield their build ID ---- */

static void c_elf64_exec(struct ctx *c) { valid(c, ELFCLASS64, ET_EXEC); }
static void c_elf64_dyn(struct ctx *c) { valid(c, ELFCLASS64, ET_DYN); }
static void c_elf32_exec(struct ctx *c) { valid(c, ELFCLASS32, ET_EXEC); }
static void c_elf32_dyn(struct ctx *c) { valid(c, ELFCLASS32, ET_DYN); }

/*
 * ld writes a 1-byte id as a 17-byte note with no padding, so its padded end
 * lies past p_filesz and upstream rejects it (see g_hex1_unpadded).  A
 * 1-byte id in a properly padded note must be accepted.
 */
static void c_size_1(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 1);
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, c->id, 1);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
}

/* Program headers on page 2: a parser must honour e_phoff past page 0. */
static void c_phdrs_page2(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, c->id, 20);
	need(&c->m, 3 * PAGE);
	finish(&c->m, ELFCLASS64, ET_DYN, 2 * PAGE + 0x40, 0x100, end - 0x100);
}

/* The note on page 3. */
static void c_note_page3(struct ctx *c)
{
	uint64_t off = 3 * PAGE + 0x80, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, off, end - off);
}

/* Both past page 0, ELF32. */
static void c_elf32_beyond_page0(struct ctx *c)
{
	uint64_t off = 2 * PAGE + 0x10, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS32, ET_EXEC, PAGE + 0x34, off, end - off);
}

/* The note header itself crosses the page 0/1 boundary. */
static void c_note_straddle_hdr(struct ctx *c)
{
	uint64_t off = PAGE - 8, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, off, end - off);
}

/* Header on page 0, id bytes crossing into page 1. */
static void c_note_straddle_desc(struct ctx *c)
{
	uint64_t off = PAGE - 20, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, off, end - off);
}

/*
 * Notes before the build ID in the same PT_NOTE, including decoys a sloppy
 * parser takes: a type-3 note with another owner (upstream fix "Only
 * consider GNU notes"), a Go build ID (type 4), a GNU type-3 note whose
 * descsz exceeds 20.
 */
static void c_several_notes(struct ctx *c)
{
	unsigned char junk[24];
	uint64_t off = 0x100;

	make_id(c->name, "decoy", junk, sizeof(junk));
	off = put_gnu_note(&c->m, off, NT_GNU_ABI_TAG, junk, 16);
	off = put_gnu_note(&c->m, off, 5 /* NT_GNU_PROPERTY_TYPE_0 */, junk, 16);
	off = put_note(&c->m, off, 3, "Go", 4, 4, 20, junk, 20);
	off = put_note(&c->m, off, 4, "Xen", 4, NT_BUILD_ID, 20, junk + 1, 20);
	off = put_gnu_note(&c->m, off, NT_BUILD_ID, junk, 24);
	gnu_id(c, 20);
	off = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, off - 0x100);
}

/* First PT_NOTE: an ABI tag and a foreign type-3 note; the id is in the 2nd. */
static void c_second_ptnote(struct ctx *c)
{
	unsigned char junk[20];
	uint64_t end1, end2;

	make_id(c->name, "decoy", junk, sizeof(junk));
	end1 = put_gnu_note(&c->m, 0x100, NT_GNU_ABI_TAG, junk, 16);
	end1 = put_note(&c->m, end1, 4, "Xen", 4, NT_BUILD_ID, 20, junk, 20);
	gnu_id(c, 20);
	end2 = put_gnu_note(&c->m, 0x200, NT_BUILD_ID, c->id, 20);
	put_ehdr(&c->m, ELFCLASS64, ET_DYN, 64, 3);
	put_phdr(&c->m, ELFCLASS64, 64, 0, PT_LOAD, 0, c->m.len);
	put_phdr(&c->m, ELFCLASS64, 64, 1, PT_NOTE, 0x100, end1 - 0x100);
	put_phdr(&c->m, ELFCLASS64, 64, 2, PT_NOTE, 0x200, end2 - 0x200);
}

/*
 * 256 program headers, the PT_NOTE last (index 255): the cap on the
 * phdr count is at least 256 (the 5.12 parser stopped at 72).  The table
 * spans pages 0-3.
 */
static void c_phnum_256(struct ctx *c)
{
	uint64_t off = 64 + 256 * sizeof(Elf64_Phdr), end;
	unsigned int i;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	put_ehdr(&c->m, ELFCLASS64, ET_DYN, 64, 256);
	put_phdr(&c->m, ELFCLASS64, 64, 0, PT_LOAD, 0, end);
	for (i = 1; i < 255; i++)
		put_phdr(&c->m, ELFCLASS64, 64, i, PT_NULL, 0, 0);
	put_phdr(&c->m, ELFCLASS64, 64, 255, PT_NOTE, off, end - off);
}

/* ---- files that must fall back to maj/min/ino ---- */

static void m_bad_magic(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.b[EI_MAG3] = 'G';
	c->id_len = 0;
}

static void m_class_none(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.b[EI_CLASS] = ELFCLASSNONE;
	c->id_len = 0;
}

static void m_class_3(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.b[EI_CLASS] = 3;
	c->id_len = 0;
}

/* 40 bytes: the header stops inside e_flags, before e_phnum. */
static void m_truncated_hdr(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.len = 40;
	c->id_len = 0;
}

/* e_ident only. */
static void m_truncated_ident(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.len = EI_NIDENT;
	c->id_len = 0;
}

/* e_phoff 1 MiB into a 4 KiB file: that page is not in the page cache. */
static void m_phoff_past_eof(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	ehdr64(c)->e_phoff = 1 << 20;
	c->id_len = 0;
}

/* e_phoff + e_phnum * e_phentsize wraps around 2^64. */
static void m_phoff_overflow(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	ehdr64(c)->e_phoff = UINT64_MAX - 63;
	c->id_len = 0;
}

static void m_phnum_0(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	ehdr64(c)->e_phnum = 0;
	c->id_len = 0;
}

/*
 * e_phnum 65535 (PN_XNUM).  Upstream does not reject a large count, it
 * caps the walk at 256 entries, so a PT_NOTE among the first 256 would
 * still be found.  What must not happen is a walk over 65535 entries: the
 * PT_NOTE sits at index 256, just past the cap, so a parser that honours
 * the raw count reports the id and this case catches it.
 */
static void m_phnum_65535(struct ctx *c)
{
	uint64_t off = 64 + 257 * sizeof(Elf64_Phdr), end;
	unsigned int i;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	put_ehdr(&c->m, ELFCLASS64, ET_DYN, 64, 65535);
	put_phdr(&c->m, ELFCLASS64, 64, 0, PT_LOAD, 0, end);
	for (i = 1; i < 256; i++)
		put_phdr(&c->m, ELFCLASS64, 64, i, PT_NULL, 0, 0);
	put_phdr(&c->m, ELFCLASS64, 64, 256, PT_NOTE, off, end - off);
	c->id_len = 0;
}

/*
 * n_namesz 0xffffffff in front of an otherwise valid GNU build-ID note.
 * Upstream's 32-bit ALIGN() wraps this to 0 and steps 12 + 20 bytes, which
 * leaves too few bytes for another note, so it falls back.
 */
static void m_namesz_max(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_note(&c->m, 0x100, 0xffffffff, "GNU", 4, NT_BUILD_ID, 20, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

/* n_descsz 0xffffffff, followed by 20 bytes that do not form a note. */
static void m_descsz_max(struct ctx *c)
{
	unsigned char fill[20];
	uint64_t end;

	memset(fill, 0xa5, sizeof(fill));
	end = put_note(&c->m, 0x100, 4, "GNU", 4, NT_BUILD_ID, 0xffffffff, fill, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
}

/* The id's last byte lies one byte past p_filesz. */
static void m_note_past_segment(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	phdr64(c, 1)->p_filesz -= 1;
	c->id_len = 0;
}

/* p_offset far past EOF: not in the page cache, never read from disk. */
static void m_note_past_eof(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	phdr64(c, 1)->p_offset = 1 << 20;
	c->id_len = 0;
}

/* p_offset + p_filesz wraps around 2^64. */
static void m_offset_overflow64(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	phdr64(c, 1)->p_offset = UINT64_MAX - 15;
	phdr64(c, 1)->p_filesz = 0x100;
	c->id_len = 0;
}

/* ELF32: p_offset + p_filesz wraps around 2^32. */
static void m_offset_overflow32(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0xf0, NT_BUILD_ID, c->id, 20);
	need(&c->m, 0x200);
	finish(&c->m, ELFCLASS32, ET_EXEC, 52, 0xf0, end - 0xf0);
	put_phdr(&c->m, ELFCLASS32, 52, 1, PT_NOTE, 0xfffffff0, 0x100 + (end - 0xf0));
	c->id_len = 0;
}

static void m_wrong_name(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_note(&c->m, 0x100, 4, "GNX", 4, NT_BUILD_ID, 20, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

/* "GNU" with n_namesz 3: the name must match including its NUL. */
static void m_name_no_nul(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_note(&c->m, 0x100, 3, "GNU", 3, NT_BUILD_ID, 20, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

static void m_wrong_type(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x100, NT_GNU_ABI_TAG, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

/*
 * n_descsz 0.  Four bytes of padding stay inside the segment so that the
 * note is actually examined (a 16-byte segment is too short to be walked).
 */
static void m_size_0(struct ctx *c)
{
	uint64_t end;

	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, NULL, 0);
	need(&c->m, end + 4);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end + 4 - 0x100);
}

/* 21 id bytes in a properly padded note: too long, whatever the padding. */
static void m_size_21(struct ctx *c)
{
	unsigned char id[21];
	uint64_t end;

	make_id(c->name, "", id, sizeof(id));
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, id, sizeof(id));
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
}

/* Valid notes and phdrs, but a type the kernel does not parse. */
static void m_et_rel(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_REL);
	c->id_len = 0;
}

static void m_et_core(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_CORE);
	c->id_len = 0;
}

static void m_not_elf(struct ctx *c)
{
	static const char text[] = "#!/bin/sh\n# not an ELF file\nexit 0\n";

	put(&c->m, 0, text, sizeof(text) - 1);
}

static void m_empty(struct ctx *c)
{
	(void)c;
}

static const struct {
	const char *name;
	void (*fn)(struct ctx *c);
} cases[] = {
#define C(x) { #x, x }
	C(c_elf64_exec), C(c_elf64_dyn), C(c_elf32_exec), C(c_elf32_dyn),
	C(c_size_1), C(c_phdrs_page2), C(c_note_page3), C(c_elf32_beyond_page0),
	C(c_note_straddle_hdr), C(c_note_straddle_desc), C(c_several_notes),
	C(c_second_ptnote), C(c_phnum_256),
	C(m_bad_magic), C(m_class_none), C(m_class_3), C(m_truncated_hdr),
	C(m_truncated_ident), C(m_phoff_past_eof), C(m_phoff_overflow),
	C(m_phnum_0), C(m_phnum_65535), C(m_namesz_max), C(m_descsz_max),
	C(m_note_past_segment), C(m_note_past_eof), C(m_offset_overflow64),
	C(m_offset_overflow32), C(m_wrong_name), C(m_name_no_nul), C(m_wrong_type),
	C(m_size_0), C(m_size_21), C(m_et_rel), C(m_et_core), C(m_not_elf),
	C(m_empty),
#undef C
};

static void write_file(const char *dir, const char *name, const char *suffix,
		       const void *p, size_t n)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0)
		die(path);
	if (n && write(fd, p, n) != (ssize_t)n)
		die(path);
	if (close(fd))
		die(path);
}

int main(int argc, char **argv)
{
	size_t i, k;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctx c = { .name = cases[i].name };
		char hex[2 * sizeof(c.id) + 2];

		cases[i].fn(&c);
		if ((c.name[0] == 'c') != (c.id_len > 0)) {
			fprintf(stderr, "gen_fixtures: %s: c_ files carry an id, m_ files none\n",
				c.name);
			return 1;
		}
		write_file(argv[1], c.name, "", c.m.b, c.m.len);
		if (c.id_len) {
			for (k = 0; k < c.id_len; k++)
				sprintf(hex + 2 * k, "%02x", c.id[k]);
			hex[2 * k] = '\n';
			write_file(argv[1], c.name, ".id", hex, 2 * k + 1);
		}
		free(c.m.b);
	}
	return 0;
}
