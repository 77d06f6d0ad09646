// Chapter 12's presentation: the state-space layer's three forms, their timing, the family of
// recurrent mixers, the MQAR table with its verdicts, and the cost of one generated token. Every
// sentence is chosen from a computed verdict (attn/studies/verdict.hpp).
#pragma once

#include "attn/present/narrate.hpp"
#include "attn/studies/recall.hpp"
#include "attn/studies/state_space.hpp"

namespace attn {

void show_ssd_example(Narrator& nar, const SsdExample& e);
void report_ssd_agreement(Narrator& nar, const SsdAgreement& a);
void report_ssd_timing(Narrator& nar, const SsdTiming& t);
void report_family(Narrator& nar, const FamilyDemo& f);
// The task (one sequence printed), the models and what training needed.
void show_mqar_task(Narrator& nar, std::size_t vocab);
void report_recall(Narrator& nar, const RecallTable& t, const RecallVerdicts& v);
// For --export: mqar_accuracy and mqar_state_bytes (archs × widths × pairs), the axes and verdicts in
// the manifest's "mqar" entry.
void export_recall(Narrator& nar, const RecallTable& t, const RecallVerdicts& v);
void report_decode_cost(Narrator& nar, const DecodeCost& c);

}  // namespace attn
