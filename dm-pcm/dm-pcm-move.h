/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-move.c: the gap mover.
 */
#ifndef DM_PCM_MOVE_H
#define DM_PCM_MOVE_H

#include "dm-pcm.h"

/**
 * pcm_move_init() - Allocate the mover's buffers and its workqueue.
 * @pc: the target, being constructed
 *
 * The workqueue also runs the bitmap's clear pass and wear persistence.
 *
 * Return: 0, or -ENOMEM.
 */
int pcm_move_init(struct pcm_c *pc);

/**
 * pcm_move_exit() - Destroy the workqueue and free the buffers.
 * @pc: the target
 */
void pcm_move_exit(struct pcm_c *pc);

/**
 * pcm_move_rounds() - "move_gap N".
 * @pc: the target
 * @rounds: N
 *
 * The moves that writes already owe, then N rounds of one more move in
 * every domain; all durable when it returns.
 *
 * Context: message; sleeps.
 * Return: 0, -EAGAIN (the device is suspending), -EINTR (a fatal signal)
 * or another negative errno.
 */
int pcm_move_rounds(struct pcm_c *pc, u64 rounds);

/**
 * pcm_move_quiesce() - Postsuspend: pay what writes owe, stop the mover.
 * @pc: the target, no bio in flight
 *
 * The registers are made durable in both superblock copies, so that a
 * device at rest has two equal copies.
 *
 * Context: process; sleeps.
 */
void pcm_move_quiesce(struct pcm_c *pc);

/**
 * pcm_move_suspending() - Presuspend (or its undo): "move_gap" stops.
 * @pc: the target
 * @suspending: true at presuspend, false at presuspend_undo
 *
 * Moves that writes owe go on.
 */
void pcm_move_suspending(struct pcm_c *pc, bool suspending);

/**
 * pcm_move_resume() - Resume: moves owed before the suspend go ahead.
 * @pc: the target
 */
void pcm_move_resume(struct pcm_c *pc);

#endif
