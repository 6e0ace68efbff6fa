/* SPDX-License-Identifier: GPL-2.0-only */
/* glibc's <errno.h> includes <linux/errno.h> too: pass it through. */
#include_next <linux/errno.h>
#include "../kernel-shim.h"
