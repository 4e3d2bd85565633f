/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixtures each program sweeps, by what a kernel with the feature must
 * report for them: one list each, expanded by every program that sweeps it
 * (X(name) once per fixture, mkfixtures.sh makes the files).
 */
#ifndef BUILDID_FIXTURE_LISTS_H
#define BUILDID_FIXTURE_LISTS_H

/* The build ID, in MMAP2 (buildid_record's has_id) and in the BPF stack map. */
#define BID_FIXTURES_WITH_ID(X)						\
	/* ld --build-id=sha1|md5|uuid|0x<hex>: 20, 16, 16, 8 and 20 bytes */	\
	X(g_sha1) X(g_md5) X(g_uuid) X(g_hex8) X(g_hex20)			\
	/* glibc static ET_EXEC and dynamic PIE (ET_DYN), several PT_NOTEs */	\
	X(g_static) X(g_pie)							\
	/* ELF32 ET_EXEC and ET_DYN */						\
	X(g_elf32) X(g_elf32_pie)						\
	/* crafted: both classes and types */					\
	X(c_elf64_exec) X(c_elf64_dyn) X(c_elf32_exec) X(c_elf32_dyn)		\
	/* a 1-byte id in a padded note */					\
	X(c_size_1)								\
	/* beyond the first page (all pages cached) */				\
	X(c_phdrs_page2) X(c_note_page3) X(c_elf32_beyond_page0)		\
	X(c_note_straddle_hdr) X(c_note_straddle_desc) X(c_phnum_256)		\
	/* other notes first, decoys included; the id in the second PT_NOTE */	\
	X(c_several_notes) X(c_second_ptnote)

/* No build ID: MMAP2 falls back (buildid_fallback), the stack map gives the address. */
#define BID_FIXTURES_FALLBACK(X)					\
	/* not ELF, ELF without a note, empty */				\
	X(m_not_elf) X(g_none) X(m_empty)					\
	/* ld's ids that do not fit (21, 32 bytes) or whose note is unpadded (1 byte) */ \
	X(g_hex21) X(g_hex32) X(g_hex1_unpadded)				\
	/* crafted ids of size 0 and 21 in well-formed notes */			\
	X(m_size_0) X(m_size_21)						\
	/* types other than ET_EXEC/ET_DYN, with a valid note */		\
	X(g_rel) X(m_et_rel) X(m_et_core)					\
	/* valid in the other byte order (readelf finds the id) */		\
	X(m_foreign_endian64) X(m_foreign_endian32)				\
	/* wrong note name or type */						\
	X(m_wrong_name) X(m_name_no_nul) X(m_wrong_type)			\
	/* malformed headers */							\
	X(m_bad_magic) X(m_class_none) X(m_class_3) X(m_truncated_hdr)		\
	X(m_truncated_ident) X(m_phoff_past_eof) X(m_phoff_overflow)		\
	X(m_phnum_0) X(m_phnum_65535)						\
	/* malformed notes and segments */					\
	X(m_namesz_max) X(m_descsz_max) X(m_note_past_segment)			\
	X(m_note_past_eof) X(m_offset_overflow64) X(m_offset_overflow32)

#endif
